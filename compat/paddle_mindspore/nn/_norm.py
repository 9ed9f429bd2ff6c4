"""Normalisation cells: ``nn.BatchNorm1d`` (``(N, C)``, ``(N, C, L)``), ``nn.BatchNorm2d``,
``nn.BatchNorm3d``, ``nn.SyncBatchNorm`` and ``nn.GroupNorm``."""

from __future__ import annotations

from typing import Any

import paddle
import paddle.nn.functional as F

from paddle_recompute import register_stateful_layer

from .._cell import Cell
from .._dtype import float32
from .._validate import not_provided
from ._params import make_parameter, register_moving

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "GroupNorm"]


# NOTE [ MindSpore's BatchNorm arithmetic ]
# MindSpore 2.10's CPU BatchNorm (float32) normalises as ``(x - mean) * (gamma / sqrt(var + eps))
# + beta``: in training with the batch's mean and biased variance, in inference with the moving
# ones (recorded: compat/tests/recorded/batchnorm.json; inference bit-identical, training
# within a few ulps). Paddle's CPU kernel computes ``x * a + (beta - mean * a)``, which cancels
# where a channel's mean is large beside its spread; over four training steps of mindcv's
# resnet18 that moved the losses past MindSpore's own noise floor.
#
# In training the layer still runs Paddle's kernel, with momentum 0 and zeroed running
# statistics, so that it writes the batch's mean and variance: its sums, per sample over the
# spatial positions and then over the samples, are MindSpore's in structure (closer to
# MindSpore's moving statistics than float64 sums are, on the recorded cases and on mindcv's
# training script). The output takes the value of MindSpore's expression with those statistics,
# and keeps the kernel's gradient (the same formula, ``dx = gamma * inv * (dy - mean(dy) - xhat *
# mean(dy * xhat))``; within 2e-7 of MindSpore's on the recorded cases) and what the kernel holds
# for backward (``x`` and two per-channel vectors). ``kernel_out - kernel_out.detach()`` is
# exactly zero, so the value is exact. Not a PyLayer: ``paddle.grad`` refuses a PyLayer gradient
# for a parameter it was not asked for (``grad`` with respect to inputs only). Inputs other than
# float32 keep Paddle's kernel alone.


def _channels(x: paddle.Tensor, value: paddle.Tensor) -> paddle.Tensor:
    """A per-channel ``(C,)`` tensor shaped to broadcast over ``x`` (``(1, C, 1, ...)``)."""
    return value.reshape([1, x.shape[1]] + [1] * (x.ndim - 2))


def _normalise(x, mean, variance, gamma, beta, eps):
    """``(x - mean) * (gamma / sqrt(variance + eps)) + beta`` with per-channel ``(C,)`` values."""
    scale = gamma / paddle.sqrt(variance + eps)
    return (x - _channels(x, mean)) * _channels(x, scale) + _channels(x, beta)


def _batch_statistics(x, gamma, beta, eps, layout):
    """``(out, mean, biased variance)`` of a training forward (NOTE above); statistics ``(C,)``."""
    mean, variance = paddle.zeros([x.shape[1]], x.dtype), paddle.zeros([x.shape[1]], x.dtype)
    kernel_out = F.batch_norm(x, mean, variance, weight=gamma, bias=beta, training=True, momentum=0.0,
                              epsilon=eps, data_format=layout)  # writes the batch's statistics
    with paddle.no_grad():
        out = _normalise(x, mean, variance, gamma, beta, eps)
    return out + (kernel_out - kernel_out.detach()), mean, variance


@register_stateful_layer
class _BatchNorm(Cell):
    """``nn.BatchNorm{1,2}d(num_features, eps=1e-5, momentum=0.9, affine=True, ...)``.

    ``momentum`` has MindSpore's (and Paddle's) meaning: ``moving = momentum * moving +
    (1 - momentum) * batch``. Batch statistics are used in training mode unless
    ``use_batch_statistics`` says otherwise. The moving statistics are persistable buffers
    (parameters in MindSpore: ``parameters_and_names()`` lists them, first, as MindSpore does).
    """

    _ms_buffer_params = ("moving_mean", "moving_variance")
    _ms_parameter_order = ("moving_mean", "moving_variance", "gamma", "beta")
    op = "BatchNorm"
    ranks: tuple[int, ...] = ()
    layouts = {2: "NC", 3: "NCL", 4: "NCHW"}

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.9, affine: bool = True,
                 gamma_init: Any = "ones", beta_init: Any = "zeros", moving_mean_init: Any = "zeros",
                 moving_var_init: Any = "ones", use_batch_statistics: bool | None = None,
                 data_format: str = "NCHW", dtype: Any = float32):
        super().__init__()
        if data_format != "NCHW":
            raise not_provided(f"nn.{self.op}(data_format={data_format!r})")
        if not 0 <= momentum <= 1:
            raise ValueError(f"For '{self.op}', the 'momentum' must be in range [0, 1], but got {momentum}.")
        self.eps, self.momentum, self.use_batch_statistics = eps, momentum, use_batch_statistics
        self.gamma = make_parameter(gamma_init, [num_features], dtype, "bn.gamma", requires_grad=affine)
        self.beta = make_parameter(beta_init, [num_features], dtype, "bn.beta", requires_grad=affine)
        register_moving(self, "moving_mean", moving_mean_init, [num_features], dtype)
        register_moving(self, "moving_variance", moving_var_init, [num_features], dtype)

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        if x.ndim not in self.ranks:
            raise ValueError(f"For '{self.op}', the input must have rank in {list(self.ranks)}, "
                             f"but got {x.ndim}.")
        batch_stats = self.training if self.use_batch_statistics is None else self.use_batch_statistics
        if x.dtype != paddle.float32:
            return self._paddle_kernel(x, batch_stats)
        if not batch_stats:
            return _normalise(x, self.moving_mean, self.moving_variance, self.gamma, self.beta, self.eps)
        out, mean, variance = _batch_statistics(x, self.gamma, self.beta, self.eps, self.layouts[x.ndim])
        self._move(mean, variance, x.size // x.shape[1])
        return out

    def _move(self, mean: paddle.Tensor, variance: paddle.Tensor, count: int) -> None:
        """MindSpore 2.10 moves the variance toward the batch's *unbiased* variance (recorded:
        compat/tests/test_ms_recorded_cases.py)."""
        with paddle.no_grad():
            unbiased = variance * (count / max(count - 1, 1))
            for buffer, batch in ((self.moving_mean, mean), (self.moving_variance, unbiased)):
                moved = buffer * self.momentum + batch.astype(buffer.dtype) * (1 - self.momentum)
                paddle.assign(moved, buffer)

    def _paddle_kernel(self, x: paddle.Tensor, batch_stats: bool) -> paddle.Tensor:
        """Paddle's kernel, for inputs other than float32 (AMP's float16 and bfloat16)."""
        # In training the kernel writes the moving variance in place and saves what it was given
        # for backward: it gets a copy, and the buffer receives MindSpore's value afterwards.
        variance = self.moving_variance.clone() if batch_stats else self.moving_variance
        out = F.batch_norm(x, self.moving_mean, variance, weight=self.gamma, bias=self.beta,
                           training=batch_stats, momentum=self.momentum, epsilon=self.eps,
                           data_format=self.layouts[x.ndim])
        if batch_stats:
            paddle.assign(variance + self._unbiasing(x).astype(variance.dtype), self.moving_variance)
        return out

    def _unbiasing(self, x: paddle.Tensor) -> paddle.Tensor:
        """The difference between MindSpore's moving variance (toward the *unbiased* batch
        variance) and Paddle's kernel's (the biased one): ``(1 - momentum) * biased / (n - 1)``."""
        axes = [0] + list(range(2, x.ndim))
        count = x.size // x.shape[1]
        with paddle.no_grad():
            biased = x.detach().astype("float32").var(axis=axes, unbiased=False)
            return (1 - self.momentum) * biased / max(count - 1, 1)


class BatchNorm1d(_BatchNorm):
    """``nn.BatchNorm1d``: inputs ``(N, C)`` or ``(N, C, L)``."""

    op = "BatchNorm1d"
    ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    """``nn.BatchNorm2d``: inputs ``(N, C, H, W)``."""

    op = "BatchNorm2d"
    ranks = (4,)


class SyncBatchNorm(BatchNorm2d):
    """``nn.SyncBatchNorm(num_features, eps=1e-5, momentum=0.9, affine=True, ..., process_groups=None)``.

    On one process (the only setting here) the batch is the local batch: BatchNorm2d's
    computation, on ``(N, C)`` or ``(N, C, H, W)``.
    """

    op = "SyncBatchNorm"
    ranks = (2, 4)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.9, affine: bool = True,
                 gamma_init: Any = "ones", beta_init: Any = "zeros", moving_mean_init: Any = "zeros",
                 moving_var_init: Any = "ones", use_batch_statistics: bool | None = None,
                 process_groups: Any = None, dtype: Any = float32):
        if process_groups is not None:
            raise not_provided("nn.SyncBatchNorm(process_groups=...)", "one process only")
        super().__init__(num_features, eps, momentum, affine, gamma_init, beta_init, moving_mean_init,
                         moving_var_init, use_batch_statistics, dtype=dtype)


class BatchNorm3d(Cell):
    """``nn.BatchNorm3d(num_features, ...)`` on ``(N, C, D, H, W)``: MindSpore's BatchNorm2d child
    ``bn2d`` (its parameter names) on the input seen as ``(N, C, D * H, W)``."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.9, affine: bool = True,
                 gamma_init: Any = "ones", beta_init: Any = "zeros", moving_mean_init: Any = "zeros",
                 moving_var_init: Any = "ones", use_batch_statistics: bool | None = None,
                 dtype: Any = float32):
        super().__init__()
        self.bn2d = BatchNorm2d(num_features, eps, momentum, affine, gamma_init, beta_init, moving_mean_init,
                                moving_var_init, use_batch_statistics, dtype=dtype)

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        if x.ndim != 5:
            raise ValueError(f"For 'BatchNorm3d', the input must have rank 5, but got {x.ndim}.")
        n, c, d, h, w = x.shape
        return paddle.reshape(self.bn2d(paddle.reshape(x, [n, c, d * h, w])), [n, c, d, h, w])


class GroupNorm(Cell):
    """``nn.GroupNorm(num_groups, num_channels, eps=1e-5, affine=True, gamma_init='ones',
    beta_init='zeros')``: parameters ``gamma`` and ``beta`` of shape ``(num_channels,)``.

    A float32 input is normalised in float64 and rounded back: MindSpore's CPU kernel gives the
    correctly rounded outputs (bit-identical to this, recorded). Paddle's float32
    kernel computes its statistics in float32, and its error is not random: on a
    (2, 768, 2, 2) input it scales every output by about 1 + 1.6e-7. Small, but coherent over
    every block, it moved poolformer_m36's logits after one training step by 3x MindSpore's noise
    floor (compat/zoo.py).
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 gamma_init: Any = "ones", beta_init: Any = "zeros", dtype: Any = float32):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"For 'GroupNorm', the 'num_channels' must be divided by 'num_groups', "
                             f"but got 'num_channels': {num_channels}, 'num_groups': {num_groups}.")
        self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
        self.gamma = make_parameter(gamma_init, [num_channels], dtype, "gn.gamma", requires_grad=affine)
        self.beta = make_parameter(beta_init, [num_channels], dtype, "gn.beta", requires_grad=affine)

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        if x.dtype != paddle.float32:
            return F.group_norm(x, self.num_groups, self.eps, self.gamma, self.beta)
        wide = [t.astype(paddle.float64) for t in (x, self.gamma, self.beta)]
        return F.group_norm(wide[0], self.num_groups, self.eps, wide[1], wide[2]).astype(paddle.float32)
