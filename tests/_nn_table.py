"""One small constructor and input for every ``paddle.nn`` Layer class (tests/test_nn_sweep.py).

``LAYERS`` is keyed by class name (``cls.__name__``; aliases such as ``Conv2d`` are the same
class).  A class that cannot run on the CPU at all is an :class:`Unrunnable` entry, whose
``check`` must still raise the named error, so the reason is tested rather than assumed.
``EXTRAS`` holds what is not a class of its own: ``paddle.nn.utils``' hook forms and forward
hooks.

Shapes are tiny on purpose: the whole sweep runs in seconds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

__all__ = ["Case", "Draw", "EXTRAS", "LAYERS", "Unrunnable"]


class Draw:
    """Inputs from a fixed numpy stream: the same values for every run of a case."""

    def __init__(self, seed: int = 0):
        self._rs = np.random.RandomState(seed)

    def f(self, *shape: int) -> paddle.Tensor:
        """A float32 input that needs a gradient."""
        t = paddle.to_tensor(self._rs.standard_normal(shape).astype("float32"))
        t.stop_gradient = False
        return t

    def p(self, *shape: int, grad: bool = True) -> paddle.Tensor:
        """Values in (0.05, 0.95): probabilities, targets, variances."""
        t = paddle.to_tensor(self._rs.uniform(0.05, 0.95, shape).astype("float32"))
        t.stop_gradient = not grad
        return t

    def sign(self, *shape: int) -> paddle.Tensor:
        """A float label of -1 and 1 (no gradient)."""
        return paddle.to_tensor(np.where(self._rs.standard_normal(shape) > 0, 1.0, -1.0).astype("float32"))

    def i(self, low: int, high: int, *shape: int, dtype: str = "int64") -> paddle.Tensor:
        """Integers in [low, high): labels, indices."""
        return paddle.to_tensor(self._rs.randint(low, high, shape).astype(dtype))

    def t(self, values: Any, dtype: str) -> paddle.Tensor:
        """A constant tensor (lengths, hand-made labels)."""
        return paddle.to_tensor(np.asarray(values, dtype=dtype))


@dataclass(frozen=True)
class Case:
    """``build()`` makes the layer (after the test seeds Paddle), ``inputs(draw)`` its
    arguments; the region runs ``call(layer, *inputs)``, by default ``layer(*inputs)``."""

    build: Callable[[], nn.Layer]
    inputs: Callable[[Draw], tuple]
    call: Callable[..., Any] | None = None


@dataclass(frozen=True)
class Unrunnable:
    """A class that cannot be built or run on the CPU: ``check()`` raises ``raises``
    with ``match`` in its message while the reason holds."""

    reason: str
    check: Callable[[], Any]
    raises: type | tuple = Exception
    match: str = ""


def _x(*shape: int) -> Callable[[Draw], tuple]:
    return lambda d: (d.f(*shape),)


def _unary(make: Callable[[], nn.Layer], *shape: int) -> Case:
    return Case(make, _x(*shape))


def _pair(make: Callable[[], nn.Layer], *shape: int) -> Case:
    """A loss or distance over two float inputs that both need gradients."""
    return Case(make, lambda d: (d.f(*shape), d.f(*shape)))


def _with_target(make: Callable[[], nn.Layer], *shape: int) -> Case:
    """A loss over a float input and a float target in (0, 1) without a gradient."""
    return Case(make, lambda d: (d.f(*shape), d.p(*shape, grad=False)))


def _with_sign(make: Callable[[], nn.Layer], *shape: int) -> Case:
    return Case(make, lambda d: (d.f(*shape), d.sign(*shape)))


def _classes(make: Callable[[], nn.Layer], n: int = 5, batch: int = 4) -> Case:
    return Case(make, lambda d: (d.f(batch, n), d.i(0, n, batch)))


# ----------------------------------------------------------------------- containers and bases


def _plain_layer() -> nn.Layer:
    holder = nn.Layer()
    holder.fc = nn.Linear(3, 4)
    holder.scale = holder.create_parameter([4])
    return holder


class _ElmanCell(nn.RNNCellBase):
    """The smallest user cell on ``RNNCellBase`` (its ``get_initial_states`` runs in RNN)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3 + 4, 4)

    @property
    def state_shape(self):
        return (4,)

    def forward(self, inputs, states=None):
        if states is None:
            states = self.get_initial_states(inputs, self.state_shape)
        h = paddle.tanh(self.fc(paddle.concat([inputs, states], axis=-1)))
        return h, h


def _parameter_list() -> nn.ParameterList:
    return nn.ParameterList([paddle.create_parameter([3, 4], "float32"),
                             paddle.create_parameter([4], "float32")])


def _parameter_dict() -> nn.ParameterDict:
    return nn.ParameterDict({"w": paddle.create_parameter([3, 4], "float32"),
                             "b": paddle.create_parameter([4], "float32")})


def _max_unpool(layer: nn.Layer, pool: Callable, x: paddle.Tensor) -> paddle.Tensor:
    out, indices = pool(x, 2, return_mask=True)
    return layer(out, indices)


def _sync_batch_norm_on_cpu() -> None:
    layer = nn.SyncBatchNorm(3)
    layer.train()
    layer(paddle.randn([2, 3, 2, 2]))


# ----------------------------------------------------------------------- the table

_DROP = 0.5

LAYERS: dict[str, Case | Unrunnable] = {
    # activations
    "CELU": _unary(nn.CELU, 2, 6),
    "ELU": _unary(nn.ELU, 2, 6),
    "GELU": _unary(nn.GELU, 2, 6),
    "GLU": _unary(nn.GLU, 2, 6),
    "Hardshrink": _unary(nn.Hardshrink, 2, 6),
    "Hardsigmoid": _unary(nn.Hardsigmoid, 2, 6),
    "Hardswish": _unary(nn.Hardswish, 2, 6),
    "Hardtanh": _unary(nn.Hardtanh, 2, 6),
    "LeakyReLU": _unary(nn.LeakyReLU, 2, 6),
    "LogSigmoid": _unary(nn.LogSigmoid, 2, 6),
    "LogSoftmax": _unary(nn.LogSoftmax, 2, 6),
    "Maxout": _unary(lambda: nn.Maxout(groups=2), 1, 4, 2, 2),
    "Mish": _unary(nn.Mish, 2, 6),
    "PReLU": _unary(lambda: nn.PReLU(num_parameters=3), 2, 3, 2),
    "RReLU": _unary(nn.RReLU, 4, 6),
    "ReLU": _unary(nn.ReLU, 2, 6),
    "ReLU6": _unary(nn.ReLU6, 2, 6),
    "SELU": _unary(nn.SELU, 2, 6),
    "Sigmoid": _unary(nn.Sigmoid, 2, 6),
    "Silu": _unary(nn.Silu, 2, 6),
    "Softmax": _unary(nn.Softmax, 2, 6),
    "Softmax2D": _unary(nn.Softmax2D, 1, 3, 2, 2),
    "Softplus": _unary(nn.Softplus, 2, 6),
    "Softshrink": _unary(nn.Softshrink, 2, 6),
    "Softsign": _unary(nn.Softsign, 2, 6),
    "Swish": _unary(nn.Swish, 2, 6),
    "Tanh": _unary(nn.Tanh, 2, 6),
    "Tanhshrink": _unary(nn.Tanhshrink, 2, 6),
    "ThresholdedReLU": _unary(lambda: nn.ThresholdedReLU(threshold=0.5), 2, 6),
    # shape
    "Identity": _unary(nn.Identity, 2, 6),
    "Flatten": _unary(nn.Flatten, 2, 3, 2),
    "Unflatten": _unary(lambda: nn.Unflatten(1, [2, 3]), 2, 6),
    "PixelShuffle": _unary(lambda: nn.PixelShuffle(2), 1, 4, 2, 2),
    "PixelUnshuffle": _unary(lambda: nn.PixelUnshuffle(2), 1, 1, 4, 4),
    "ChannelShuffle": _unary(lambda: nn.ChannelShuffle(2), 1, 4, 2, 2),
    "Unfold": _unary(lambda: nn.Unfold(kernel_sizes=2), 1, 2, 3, 3),
    "Fold": _unary(lambda: nn.Fold(output_sizes=[3, 3], kernel_sizes=2), 1, 8, 4),
    "Upsample": _unary(lambda: nn.Upsample(scale_factor=2, mode="bilinear"), 1, 2, 2, 2),
    "UpsamplingNearest2D": _unary(lambda: nn.UpsamplingNearest2D(scale_factor=2), 1, 2, 2, 2),
    "UpsamplingBilinear2D": _unary(lambda: nn.UpsamplingBilinear2D(scale_factor=2), 1, 2, 2, 2),
    # padding
    "Pad1D": _unary(lambda: nn.Pad1D(1, mode="reflect"), 1, 2, 3),
    "Pad2D": _unary(lambda: nn.Pad2D(1, mode="replicate"), 1, 2, 3, 3),
    "Pad3D": _unary(lambda: nn.Pad3D(1, mode="circular"), 1, 1, 2, 2, 2),
    "ConstantPad1D": _unary(lambda: nn.ConstantPad1D(1, 0.5), 1, 2, 3),
    "ConstantPad2D": _unary(lambda: nn.ConstantPad2D(1, 0.5), 1, 2, 3, 3),
    "ConstantPad3D": _unary(lambda: nn.ConstantPad3D(1, 0.5), 1, 1, 2, 2, 2),
    "CircularPad1D": _unary(lambda: nn.CircularPad1D(1), 1, 2, 3),
    "CircularPad2D": _unary(lambda: nn.CircularPad2D(1), 1, 2, 3, 3),
    "CircularPad3D": _unary(lambda: nn.CircularPad3D(1), 1, 1, 2, 2, 2),
    "ReflectionPad1D": _unary(lambda: nn.ReflectionPad1D(1), 1, 2, 3),
    "ReflectionPad2D": _unary(lambda: nn.ReflectionPad2D(1), 1, 2, 3, 3),
    "ReflectionPad3D": _unary(lambda: nn.ReflectionPad3D(1), 1, 1, 2, 2, 2),
    "ReplicationPad1D": _unary(lambda: nn.ReplicationPad1D(1), 1, 2, 3),
    "ReplicationPad2D": _unary(lambda: nn.ReplicationPad2D(1), 1, 2, 3, 3),
    "ReplicationPad3D": _unary(lambda: nn.ReplicationPad3D(1), 1, 1, 2, 2, 2),
    "ZeroPad1D": _unary(lambda: nn.ZeroPad1D(1), 1, 2, 3),
    "ZeroPad2D": _unary(lambda: nn.ZeroPad2D(1), 1, 2, 3, 3),
    "ZeroPad3D": _unary(lambda: nn.ZeroPad3D(1), 1, 1, 2, 2, 2),
    # dropouts (randomness replayed from the seeded stream)
    "Dropout": _unary(lambda: nn.Dropout(_DROP), 4, 6),
    "Dropout2D": _unary(lambda: nn.Dropout2D(_DROP), 2, 4, 2, 2),
    "Dropout3D": _unary(lambda: nn.Dropout3D(_DROP), 2, 4, 2, 2, 2),
    "AlphaDropout": _unary(lambda: nn.AlphaDropout(_DROP), 4, 6),
    "FeatureAlphaDropout": _unary(lambda: nn.FeatureAlphaDropout(_DROP), 2, 4, 2, 2),
    # linear, embedding, distances
    "Linear": _unary(lambda: nn.Linear(3, 4), 2, 3),
    "Bilinear": Case(lambda: nn.Bilinear(3, 2, 4), lambda d: (d.f(2, 3), d.f(2, 2))),
    "Embedding": Case(lambda: nn.Embedding(5, 3, padding_idx=0), lambda d: (d.i(0, 5, 2, 4),)),
    "CosineSimilarity": _pair(nn.CosineSimilarity, 2, 4),
    "PairwiseDistance": _pair(nn.PairwiseDistance, 2, 4),
    # convolutions
    "Conv1D": _unary(lambda: nn.Conv1D(2, 3, 3), 2, 2, 5),
    "Conv2D": _unary(lambda: nn.Conv2D(2, 3, 3), 1, 2, 4, 4),
    "Conv3D": _unary(lambda: nn.Conv3D(2, 2, 2), 1, 2, 3, 3, 3),
    "Conv1DTranspose": _unary(lambda: nn.Conv1DTranspose(2, 3, 3), 2, 2, 4),
    "Conv2DTranspose": _unary(lambda: nn.Conv2DTranspose(2, 3, 2), 1, 2, 3, 3),
    "Conv3DTranspose": _unary(lambda: nn.Conv3DTranspose(2, 2, 2), 1, 2, 2, 2, 2),
    # pooling
    "AdaptiveAvgPool1D": _unary(lambda: nn.AdaptiveAvgPool1D(2), 1, 2, 5),
    "AdaptiveAvgPool2D": _unary(lambda: nn.AdaptiveAvgPool2D(2), 1, 2, 5, 5),
    "AdaptiveAvgPool3D": _unary(lambda: nn.AdaptiveAvgPool3D(2), 1, 1, 3, 3, 3),
    "AdaptiveMaxPool1D": _unary(lambda: nn.AdaptiveMaxPool1D(2), 1, 2, 5),
    "AdaptiveMaxPool2D": _unary(lambda: nn.AdaptiveMaxPool2D(2), 1, 2, 5, 5),
    "AdaptiveMaxPool3D": _unary(lambda: nn.AdaptiveMaxPool3D(2), 1, 1, 3, 3, 3),
    "AvgPool1D": _unary(lambda: nn.AvgPool1D(2), 1, 2, 4),
    "AvgPool2D": _unary(lambda: nn.AvgPool2D(2), 1, 2, 4, 4),
    "AvgPool3D": _unary(lambda: nn.AvgPool3D(2), 1, 1, 4, 4, 4),
    "MaxPool1D": _unary(lambda: nn.MaxPool1D(2), 1, 2, 4),
    "MaxPool2D": _unary(lambda: nn.MaxPool2D(2), 1, 2, 4, 4),
    "MaxPool3D": _unary(lambda: nn.MaxPool3D(2), 1, 1, 4, 4, 4),
    "LPPool1D": _unary(lambda: nn.LPPool1D(2, 2), 1, 2, 4),
    "LPPool2D": _unary(lambda: nn.LPPool2D(2, 2), 1, 2, 4, 4),
    "FractionalMaxPool2D": _unary(lambda: nn.FractionalMaxPool2D(output_size=2), 1, 2, 5, 5),
    "FractionalMaxPool3D": _unary(lambda: nn.FractionalMaxPool3D(output_size=2), 1, 1, 5, 5, 5),
    "MaxUnPool1D": Case(lambda: nn.MaxUnPool1D(2), _x(1, 2, 4),
                        lambda layer, x: _max_unpool(layer, F.max_pool1d, x)),
    "MaxUnPool2D": Case(lambda: nn.MaxUnPool2D(2), _x(1, 2, 4, 4),
                        lambda layer, x: _max_unpool(layer, F.max_pool2d, x)),
    "MaxUnPool3D": Case(lambda: nn.MaxUnPool3D(2), _x(1, 1, 4, 4, 4),
                        lambda layer, x: _max_unpool(layer, F.max_pool3d, x)),
    # normalization (running statistics are buffers the sweep compares)
    "BatchNorm": _unary(lambda: nn.BatchNorm(3), 2, 3, 2, 2),
    "BatchNorm1D": _unary(lambda: nn.BatchNorm1D(3), 4, 3),
    "BatchNorm2D": _unary(lambda: nn.BatchNorm2D(3), 2, 3, 2, 2),
    "BatchNorm3D": _unary(lambda: nn.BatchNorm3D(2), 2, 2, 2, 2, 2),
    "GroupNorm": _unary(lambda: nn.GroupNorm(2, 4), 2, 4, 2, 2),
    "InstanceNorm1D": _unary(lambda: nn.InstanceNorm1D(3), 2, 3, 4),
    "InstanceNorm2D": _unary(lambda: nn.InstanceNorm2D(3), 2, 3, 2, 2),
    "InstanceNorm3D": _unary(lambda: nn.InstanceNorm3D(2), 2, 2, 2, 2, 2),
    "LayerNorm": _unary(lambda: nn.LayerNorm(4), 2, 3, 4),
    "LocalResponseNorm": _unary(lambda: nn.LocalResponseNorm(3), 1, 4, 2, 2),
    "SpectralNorm": _unary(lambda: nn.SpectralNorm([4, 3], power_iters=2), 4, 3),
    "SyncBatchNorm": Unrunnable(
        "its sync_batch_norm kernel is GPU-only (Paddle registers no CPU kernel)",
        _sync_batch_norm_on_cpu, RuntimeError, "kernel `sync_batch_norm` is not registered"),
    # recurrent (multi-layer ones with dropout between layers)
    "SimpleRNNCell": _unary(lambda: nn.SimpleRNNCell(3, 4), 2, 3),
    "LSTMCell": _unary(lambda: nn.LSTMCell(3, 4), 2, 3),
    "GRUCell": _unary(lambda: nn.GRUCell(3, 4), 2, 3),
    "RNNCellBase": _unary(lambda: nn.RNN(_ElmanCell()), 2, 3, 3),
    "RNN": _unary(lambda: nn.RNN(nn.SimpleRNNCell(3, 4)), 2, 3, 3),
    "BiRNN": _unary(lambda: nn.BiRNN(nn.GRUCell(3, 4), nn.GRUCell(3, 4)), 2, 3, 3),
    "SimpleRNN": _unary(lambda: nn.SimpleRNN(3, 4, num_layers=2, dropout=_DROP), 2, 3, 3),
    "LSTM": _unary(lambda: nn.LSTM(3, 4, num_layers=2, dropout=_DROP), 2, 3, 3),
    "GRU": _unary(lambda: nn.GRU(3, 4, num_layers=2, direction="bidirect", dropout=_DROP), 2, 3, 3),
    # attention
    "MultiHeadAttention": Case(lambda: nn.MultiHeadAttention(8, 2, dropout=_DROP),
                               lambda d: (d.f(2, 3, 8), d.f(2, 4, 8), d.f(2, 4, 8))),
    "TransformerEncoderLayer": _unary(lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=_DROP), 2, 3, 8),
    "TransformerEncoder": _unary(
        lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=_DROP), 2), 2, 3, 8),
    "TransformerDecoderLayer": Case(lambda: nn.TransformerDecoderLayer(8, 2, 16, dropout=_DROP),
                                    lambda d: (d.f(2, 3, 8), d.f(2, 4, 8))),
    "TransformerDecoder": Case(
        lambda: nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16, dropout=_DROP), 2),
        lambda d: (d.f(2, 3, 8), d.f(2, 4, 8))),
    "Transformer": Case(lambda: nn.Transformer(8, 2, 1, 1, 16, dropout=_DROP),
                        lambda d: (d.f(2, 4, 8), d.f(2, 3, 8))),
    # losses
    "BCELoss": Case(nn.BCELoss, lambda d: (d.p(4, 3), d.p(4, 3, grad=False))),
    "BCEWithLogitsLoss": _with_target(nn.BCEWithLogitsLoss, 4, 3),
    "CrossEntropyLoss": _classes(nn.CrossEntropyLoss),
    "NLLLoss": _classes(nn.NLLLoss),
    "MultiMarginLoss": _classes(nn.MultiMarginLoss),
    "MSELoss": _pair(nn.MSELoss, 4, 3),
    "L1Loss": _pair(nn.L1Loss, 4, 3),
    "SmoothL1Loss": _pair(nn.SmoothL1Loss, 4, 3),
    "KLDivLoss": _with_target(nn.KLDivLoss, 4, 3),
    "PoissonNLLLoss": _with_target(nn.PoissonNLLLoss, 4, 3),
    "SoftMarginLoss": _with_sign(nn.SoftMarginLoss, 4, 3),
    "HingeEmbeddingLoss": _with_sign(nn.HingeEmbeddingLoss, 4, 3),
    "MultiLabelSoftMarginLoss": Case(
        nn.MultiLabelSoftMarginLoss, lambda d: (d.f(4, 5), d.i(0, 2, 4, 5).astype("float32"))),
    "MultiLabelMarginLoss": Case(
        nn.MultiLabelMarginLoss,
        lambda d: (d.f(2, 4), d.t([[3, 0, -1, 1], [1, 2, 0, -1]], "int64"))),
    "MarginRankingLoss": Case(nn.MarginRankingLoss, lambda d: (d.f(4), d.f(4), d.sign(4))),
    "CosineEmbeddingLoss": Case(nn.CosineEmbeddingLoss, lambda d: (d.f(4, 3), d.f(4, 3), d.sign(4))),
    "TripletMarginLoss": Case(nn.TripletMarginLoss, lambda d: (d.f(4, 3), d.f(4, 3), d.f(4, 3))),
    "TripletMarginWithDistanceLoss": Case(
        nn.TripletMarginWithDistanceLoss, lambda d: (d.f(4, 3), d.f(4, 3), d.f(4, 3))),
    "GaussianNLLLoss": Case(nn.GaussianNLLLoss, lambda d: (d.f(4, 3), d.f(4, 3), d.p(4, 3))),
    "HSigmoidLoss": Case(lambda: nn.HSigmoidLoss(3, 5), lambda d: (d.f(4, 3), d.i(0, 5, 4, 1))),
    "AdaptiveLogSoftmaxWithLoss": Case(
        lambda: nn.AdaptiveLogSoftmaxWithLoss(4, 10, cutoffs=[4, 8]),
        lambda d: (d.f(6, 4), d.t([0, 3, 5, 7, 8, 9], "int64"))),
    "CTCLoss": Case(
        nn.CTCLoss,
        lambda d: (d.f(5, 2, 4), d.i(1, 4, 2, 2, dtype="int32"),
                   d.t([5, 4], "int64"), d.t([2, 1], "int64"))),
    "RNNTLoss": Case(
        nn.RNNTLoss,
        lambda d: (d.f(1, 3, 3, 4), d.i(1, 4, 1, 2, dtype="int32"),
                   d.t([3], "int32"), d.t([2], "int32"))),
    # containers and the base class, used as a region's body
    "Layer": Case(_plain_layer, _x(2, 3), lambda h, x: h.fc(x) * h.scale),
    "Sequential": _unary(lambda: nn.Sequential(nn.Linear(3, 4), nn.Dropout(_DROP), nn.Tanh()), 2, 3),
    "LayerList": Case(lambda: nn.LayerList([nn.Linear(3, 4), nn.Linear(4, 2)]), _x(2, 3),
                      lambda ls, x: ls[1](F.relu(ls[0](x)))),
    "LayerDict": Case(lambda: nn.LayerDict({"fc": nn.Linear(3, 4), "act": nn.GELU()}), _x(2, 3),
                      lambda ld, x: ld["act"](ld["fc"](x))),
    "ParameterList": Case(_parameter_list, _x(2, 3), lambda ps, x: paddle.matmul(x, ps[0]) + ps[1]),
    "ParameterDict": Case(_parameter_dict, _x(2, 3),
                          lambda ps, x: paddle.matmul(x, ps["w"]) + ps["b"]),
}


# ----------------------------------------------------------------------- not classes of their own


def _pre_hooked() -> nn.Layer:
    layer = nn.Linear(3, 4)
    layer.register_forward_pre_hook(lambda _, inputs: (inputs[0] * 2.0 + 1.0,))
    return layer


def _post_hooked() -> nn.Layer:
    layer = nn.Linear(3, 4)
    layer.register_forward_post_hook(lambda _, inputs, out: F.dropout(paddle.tanh(out), _DROP))
    return layer


EXTRAS: dict[str, Case] = {
    "utils.weight_norm(Linear)": _unary(lambda: nn.utils.weight_norm(nn.Linear(3, 4)), 2, 3),
    "utils.weight_norm(Conv2D)": _unary(lambda: nn.utils.weight_norm(nn.Conv2D(2, 3, 3)), 1, 2, 4, 4),
    "utils.spectral_norm(Linear)": _unary(lambda: nn.utils.spectral_norm(nn.Linear(8, 8)), 2, 8),
    "utils.spectral_norm(Conv2D)": _unary(
        lambda: nn.utils.spectral_norm(nn.Conv2D(2, 3, 3)), 1, 2, 4, 4),
    "forward_pre_hook(Linear)": _unary(_pre_hooked, 2, 3),
    "forward_post_hook(Linear, dropout)": _unary(_post_hooked, 2, 3),
}
