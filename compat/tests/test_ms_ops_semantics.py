"""The operators and layers the issue lists: MindSpore's semantics, checked against numpy; and
``Primitive.recompute()`` taking effect on every primitive the layer provides.

The numpy references follow MindSpore's documentation (Dense weight ``(out, in)``,
``pad_mode='same'`` padding the odd extra row/column at the bottom/right, BatchNorm momentum
``moving = momentum * moving + (1 - momentum) * batch``, ...). Float results are compared with
``assert_allclose(rtol=1e-6)``: numpy's float64 arithmetic is not Paddle's float32 kernels.
"""

from __future__ import annotations

import numpy as np
import paddle
import pytest

import paddle_mindspore as ms
from paddle_mindspore import nn, ops

RNG = np.random.RandomState(0)
X = RNG.randn(2, 3, 4).astype(np.float32)
Y = RNG.randn(2, 3, 4).astype(np.float32)
IMG = RNG.randn(2, 3, 5, 5).astype(np.float32)
W = RNG.randn(4, 3, 2, 2).astype(np.float32)


def _t(a):
    return ms.Tensor(a)


def _close(ours, expected):
    ours = ours.numpy() if hasattr(ours, "numpy") else ours
    np.testing.assert_allclose(ours, expected, rtol=1e-6, atol=1e-6)  # float32 kernels vs numpy


def _conv_numpy(x, w, stride, pads):
    """Cross-correlation with explicit (top, bottom, left, right) zero padding."""
    t, b, left, r = pads
    x = np.pad(x, ((0, 0), (0, 0), (t, b), (left, r)))
    kh, kw = w.shape[2:]
    oh, ow = (x.shape[2] - kh) // stride + 1, (x.shape[3] - kw) // stride + 1
    out = np.zeros((x.shape[0], w.shape[0], oh, ow), np.float64)
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return out


def _same_pads(size, kernel, stride):
    total = max((-(-size // stride) - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2  # the odd one at the bottom/right


# --- ops ---------------------------------------------------------------------------------------

def test_elementwise_and_matrix_ops():
    _close(ops.Add()(_t(X), _t(Y)), X + Y)
    _close(ops.Sub()(_t(X), 1.5), X - 1.5)  # a Python number takes the tensor's dtype
    _close(ops.Mul()(2.0, _t(Y)), 2 * Y)
    _close(ops.RealDiv()(_t(X), _t(Y)), X / Y)
    _close(ops.Div()(_t(X), 2.0), X / 2)
    a, b = RNG.randn(2, 3, 5).astype(np.float32), RNG.randn(2, 4, 5).astype(np.float32)
    _close(ops.BatchMatMul(transpose_b=True)(_t(a), _t(b)), a @ b.transpose(0, 2, 1))
    _close(ops.BatchMatMul()(_t(a), _t(b.transpose(0, 2, 1))), a @ b.transpose(0, 2, 1))
    _close(ops.MatMul(transpose_a=True)(_t(a[0]), _t(a[1])), a[0].T @ a[1])
    _close(ops.ReLU()(_t(X)), np.maximum(X, 0))
    _close(ops.Sigmoid()(_t(X)), 1 / (1 + np.exp(-X)))
    _close(ops.Tanh()(_t(X)), np.tanh(X))
    _close(ops.Exp()(_t(X)), np.exp(X))
    _close(ops.Sqrt()(_t(np.abs(X))), np.sqrt(np.abs(X)))
    _close(ops.Neg()(_t(X)), -X)


def test_softmax_and_reductions():
    e = np.exp(X - X.max(-1, keepdims=True))
    _close(ops.Softmax()(_t(X)), e / e.sum(-1, keepdims=True))
    e1 = np.exp(X - X.max(1, keepdims=True))
    _close(ops.Softmax(axis=1)(_t(X)), e1 / e1.sum(1, keepdims=True))
    _close(ops.ReduceMean(keep_dims=True)(_t(X), 1), X.mean(1, keepdims=True))
    _close(ops.ReduceSum()(_t(X), (0, 2)), X.sum((0, 2)))
    _close(ops.ReduceSum()(_t(X)), X.sum())  # () reduces every axis


def test_shape_ops():
    assert ops.Transpose()(_t(X), (2, 0, 1)).numpy().tolist() == X.transpose(2, 0, 1).tolist()
    assert ops.ExpandDims()(_t(X), 1).shape == [2, 1, 3, 4]
    assert ops.ExpandDims()(_t(X), -1).shape == [2, 3, 4, 1]
    assert ops.Reshape()(_t(X), (4, 6)).numpy().tolist() == X.reshape(4, 6).tolist()
    assert ops.Flatten()(_t(IMG)).shape == [2, 75]
    assert ops.Squeeze(1)(_t(X[:, :1])).shape == [2, 4] and ops.Squeeze()(_t(X[:1, :1])).shape == [4]
    assert ops.Cast()(_t(X), ms.float64).dtype == ms.float64
    assert ops.Concat(1)((_t(X), _t(Y))).numpy().tolist() == np.concatenate([X, Y], 1).tolist()
    bias = RNG.randn(3).astype(np.float32)
    _close(ops.BiasAdd()(_t(IMG), _t(bias)), IMG + bias.reshape(1, 3, 1, 1))


@pytest.mark.parametrize("pad_mode,pad,stride", [("valid", 0, 1), ("same", 0, 2), ("same", 0, 1),
                                                 ("pad", 1, 1), ("pad", (0, 1, 1, 0), 2)])
def test_conv2d_primitive(pad_mode, pad, stride):
    conv = ops.Conv2D(out_channel=4, kernel_size=2, pad_mode=pad_mode, pad=pad, stride=stride)
    if pad_mode == "same":
        pads = (*_same_pads(5, 2, stride), *_same_pads(5, 2, stride))
    else:
        pads = (pad,) * 4 if isinstance(pad, int) else pad
    _close(conv(_t(IMG), _t(W)), _conv_numpy(IMG, W, stride, pads))


def test_dropout_primitive_returns_output_and_mask():
    x = np.full((4, 256), 2.0, np.float32)
    out, mask = ops.Dropout(keep_prob=0.8)(_t(x))
    kept = mask.numpy()
    assert set(np.unique(kept)) == {0.0, 1.0} and 0.6 < kept.mean() < 0.95
    _close(out, x * kept / 0.8)


# --- nn ------------------------------------------------------------------------------------------

def test_dense_uses_the_out_in_weight_layout():
    dense = nn.Dense(4, 3, weight_init="normal", bias_init="normal")
    w, b = dense.weight.numpy(), dense.bias.numpy()
    assert w.shape == (3, 4) and b.shape == (3,)
    x = RNG.randn(5, 4).astype(np.float32)
    _close(dense(_t(x)), x @ w.T + b)
    _close(dense(_t(x.reshape(5, 1, 4))), (x @ w.T + b).reshape(5, 1, 3))  # N-D inputs too
    relu_dense = nn.Dense(4, 3, weight_init="ones", bias_init="zeros", activation="relu")
    _close(relu_dense(_t(x)), np.maximum(x.sum(1, keepdims=True).repeat(3, 1), 0))


@pytest.mark.parametrize("init,value", [("ones", 1.0), ("zeros", 0.0), (0.25, 0.25)])
def test_conv2d_cell_defaults_to_same_padding_with_string_initialisers(init, value):
    conv = nn.Conv2d(3, 4, 2, weight_init=init)
    assert conv.pad_mode == "same" and conv.bias is None and np.all(conv.weight.numpy() == value)
    pads = (*_same_pads(5, 2, 1), *_same_pads(5, 2, 1))
    _close(conv(_t(IMG)), _conv_numpy(IMG, conv.weight.numpy(), 1, pads))
    strided = nn.Conv2d(3, 4, 3, stride=2, pad_mode="valid", has_bias=True, weight_init=init,
                        bias_init="ones")
    _close(strided(_t(IMG)), _conv_numpy(IMG, strided.weight.numpy(), 2, (0, 0, 0, 0)) + 1)


def test_batchnorm2d_training_and_inference():
    bn = nn.BatchNorm2d(3, eps=1e-4, momentum=0.9).set_train()
    out = bn(_t(IMG)).numpy()
    mean, var = IMG.mean((0, 2, 3)), IMG.var((0, 2, 3))
    _close(out, (IMG - mean.reshape(1, 3, 1, 1)) / np.sqrt(var.reshape(1, 3, 1, 1) + 1e-4))
    _close(bn.moving_mean, 0.1 * mean)
    n = IMG.size // 3
    # the batch's unbiased variance, as MindSpore 2.10 (recorded)
    _close(bn.moving_variance, 0.9 + 0.1 * var * n / (n - 1))
    bn.set_train(False)
    moving = (bn.moving_mean.numpy().reshape(1, 3, 1, 1), bn.moving_variance.numpy().reshape(1, 3, 1, 1))
    _close(bn(_t(IMG)), (IMG - moving[0]) / np.sqrt(moving[1] + 1e-4))
    _close(bn.moving_mean, 0.1 * mean)  # inference leaves the statistics alone


def test_relu_dropout_flatten_cells():
    _close(nn.ReLU()(_t(X)), np.maximum(X, 0))
    drop = nn.Dropout(keep_prob=0.5)
    _close(drop(_t(X)), X)  # a new Cell is in inference mode: identity
    out = drop.set_train()(_t(np.ones((4, 256), np.float32))).numpy()
    assert set(np.unique(out)) == {0.0, 2.0}
    assert nn.Dropout(p=0.25).p == 0.25
    assert nn.Flatten()(_t(IMG)).shape == [2, 75]


def test_pooling_cells():
    x = np.arange(2 * 3 * 5 * 5, dtype=np.float32).reshape(2, 3, 5, 5)
    same = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="same")(_t(x)).numpy()  # ResNet-50's stem pool
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)  # total 2: 1 and 1
    expected = np.stack([np.stack([padded[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3].max((2, 3))
                                   for j in range(3)], -1) for i in range(3)], -2)
    np.testing.assert_array_equal(same, expected)
    valid = nn.AvgPool2d(kernel_size=2, stride=2)(_t(x)).numpy()
    _close(valid, x[:, :, :4, :4].reshape(2, 3, 2, 2, 2, 2).mean((3, 5)))
    # 'same' averages over the elements inside the input (MindSpore's AvgPool CPU kernel)
    avg_same = nn.AvgPool2d(kernel_size=2, stride=1, pad_mode="same")(_t(x)).numpy()
    assert avg_same.shape == (2, 3, 5, 5)
    _close(avg_same[:, :, 4, 4], x[:, :, 4, 4])
    # 'pad' with count_include_pad=True (the default) divides by the full window
    avg_pad = nn.AvgPool2d(kernel_size=3, stride=1, pad_mode="pad", padding=1)(_t(x)).numpy()
    _close(avg_pad[:, :, 0, 0], x[:, :, :2, :2].sum((2, 3)) / 9)


def test_containers():
    seq = nn.SequentialCell(nn.Dense(4, 4, weight_init="ones", bias_init="zeros"), nn.ReLU())
    _close(seq(_t(X[0])), np.maximum(X[0].sum(1, keepdims=True).repeat(4, 1), 0))
    cells = nn.CellList([nn.ReLU(), nn.Flatten()])
    assert len(cells) == 2 and isinstance(cells[0], nn.ReLU) and len(list(cells.cells())) == 2


# --- Tensor, Parameter, dtypes, seeds, context -----------------------------------------------

def test_tensor_parameter_dtypes_seed_context():
    p = ms.Parameter(ms.Tensor(np.ones(3, np.float32)), name="w", requires_grad=False)
    assert isinstance(p, ms.Parameter) and p.stop_gradient and p.shape == [3]
    assert [ms.float16, ms.float32, ms.float64, ms.int32, ms.int64, ms.bool_] == \
        [paddle.float16, paddle.float32, paddle.float64, paddle.int32, paddle.int64, paddle.bool]
    assert ms.Tensor([1.0, 2.0], ms.int32).dtype == ms.int32
    assert ms.Tensor(shape=(2, 2), dtype=ms.float32, init="ones").numpy().tolist() == [[1, 1], [1, 1]]
    ms.set_seed(5)
    first = nn.Dense(3, 3).weight.numpy()
    ms.set_seed(5)
    np.testing.assert_array_equal(nn.Dense(3, 3).weight.numpy(), first)
    assert ms.get_seed() == 5
    ms.set_context(mode=ms.GRAPH_MODE)
    assert ms.get_context("mode") == ms.GRAPH_MODE
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    assert ms.get_context("mode") == ms.PYNATIVE_MODE


# --- Primitive.recompute() on every primitive ------------------------------------------------

CASES = {
    "ReLU": (ops.ReLU, (), lambda: (_t(X),)),
    "Sigmoid": (ops.Sigmoid, (), lambda: (_t(X),)),
    "Tanh": (ops.Tanh, (), lambda: (_t(X),)),
    "Exp": (ops.Exp, (), lambda: (_t(X),)),
    "Sqrt": (ops.Sqrt, (), lambda: (_t(np.abs(X) + 1),)),
    "Neg": (ops.Neg, (), lambda: (_t(X),)),
    "Softmax": (ops.Softmax, (-1,), lambda: (_t(X),)),
    "Add": (ops.Add, (), lambda: (_t(X), _t(Y))),
    "Sub": (ops.Sub, (), lambda: (_t(X), _t(Y))),
    "Mul": (ops.Mul, (), lambda: (_t(X), _t(Y))),
    "RealDiv": (ops.RealDiv, (), lambda: (_t(X), _t(np.abs(Y) + 1))),
    "Div": (ops.Div, (), lambda: (_t(X), 3.0)),
    "MatMul": (ops.MatMul, (), lambda: (_t(X[0]), _t(Y[0].T))),
    "BatchMatMul": (ops.BatchMatMul, (False, True), lambda: (_t(X), _t(Y))),
    "ReduceMean": (ops.ReduceMean, (True,), lambda: (_t(X), 1)),
    "ReduceSum": (ops.ReduceSum, (), lambda: (_t(X), (0, 2))),
    "Transpose": (ops.Transpose, (), lambda: (_t(X), (2, 0, 1))),
    "ExpandDims": (ops.ExpandDims, (), lambda: (_t(X), 1)),
    "Reshape": (ops.Reshape, (), lambda: (_t(X), (4, 6))),
    "Flatten": (ops.Flatten, (), lambda: (_t(IMG),)),
    "Squeeze": (ops.Squeeze, (1,), lambda: (_t(X[:, :1]),)),
    "Cast": (ops.Cast, (), lambda: (_t(X), ms.float64)),
    "Concat": (ops.Concat, (1,), lambda: (_t(X), _t(Y))),  # called as prim((x, y)), see _Probe
    "BiasAdd": (ops.BiasAdd, (), lambda: (_t(IMG), _t(np.arange(3, dtype=np.float32)))),
    "Dropout": (ops.Dropout, (0.7,), lambda: (_t(X),)),
    "Conv2D": (ops.Conv2D, (4, 2), lambda: (_t(IMG), _t(W))),
    # issue 17
    "Sort": (ops.Sort, (1,), lambda: (_t(X),)),
    "Unstack": (ops.Unstack, (1,), lambda: (_t(X),)),
    "Tile": (ops.Tile, (), lambda: (_t(X), (2, 1, 1))),
    "Identity": (ops.Identity, (), lambda: (_t(X),)),
    "Square": (ops.Square, (), lambda: (_t(X),)),
    "Sign": (ops.Sign, (), lambda: (_t(X),)),
    "Reciprocal": (ops.Reciprocal, (), lambda: (_t(np.abs(X) + 1),)),
    "Pad": (ops.Pad, (((0, 0), (1, 0), (0, 2)),), lambda: (_t(X),)),
    "L2Normalize": (ops.L2Normalize, (1,), lambda: (_t(X),)),
    "LpNorm": (ops.LpNorm, ([1, 2],), lambda: (_t(X),)),
    "ResizeBilinearV2": (ops.ResizeBilinearV2, (), lambda: (_t(IMG), (5, 7))),
    "ResizeNearestNeighbor": (ops.ResizeNearestNeighbor, ((5, 7),), lambda: (_t(IMG),)),
    "Conv2DTranspose": (ops.Conv2DTranspose, (4, 2), lambda: (_t(IMG[:, :, :4, :4].copy()), _t(W[:3]),
                                                               (2, 4, 5, 5))),
    "LayerNorm": (ops.LayerNorm, (1, 1), lambda: (_t(X), _t(np.ones(X.shape[1:], np.float32)),
                                                _t(np.zeros(X.shape[1:], np.float32)))),
    # mindcv's training path
    "KLDivLoss": (ops.KLDivLoss, ("sum",), lambda: (_t(X), _t(np.abs(Y)))),
    "AllReduce": (ops.AllReduce, (), lambda: (_t(X),)),  # one process: the input itself
    # mindformers' Llama
    "Gather": (ops.Gather, (), lambda: (_t(X), _t(np.array([[2, 0], [1, 1]], np.int32)), 1)),
    "GatherD": (ops.GatherD, (), lambda: (_t(X), 2, _t(np.arange(24).reshape(X.shape) * 7 % 4))),
    "StridedSlice": (ops.StridedSlice, (), lambda: (_t(X), (0, 1, 0), (2, 3, 3), (1, 1, 2))),
    "ReduceMax": (ops.ReduceMax, (True,), lambda: (_t(X), -1)),
    "Log": (ops.Log, (), lambda: (_t(np.abs(X) + 1),)),
    "Rsqrt": (ops.Rsqrt, (), lambda: (_t(np.abs(X) + 1),)),
    "Pow": (ops.Pow, (), lambda: (_t(np.abs(X) + 1), 3.0)),
    "Maximum": (ops.Maximum, (), lambda: (_t(X), _t(Y))),
    "Addcmul": (ops.Addcmul, (), lambda: (_t(X), _t(Y), _t(X), _t(np.float32(0.5)))),
    # mindformers' GLM2
    "Stack": (ops.Stack, (-1,), lambda: (_t(X), _t(Y))),  # called as prim((x, y)), see _Probe
    "Tril": (ops.Tril, (1,), lambda: (_t(X),)),
    # mindformers' Qwen3 (training graph)
    "Cos": (ops.Cos, (), lambda: (_t(X),)),
    "Sin": (ops.Sin, (), lambda: (_t(X),)),
    "Minimum": (ops.Minimum, (), lambda: (_t(X), _t(Y))),
    "Split": (ops.Split, (2, 2), lambda: (_t(X),)),
    "ArgMaxWithValue": (ops.ArgMaxWithValue, (1,), lambda: (_t(X),)),  # (index, values): see OUTPUT
    "RmsNorm": (ops.RmsNorm, (1e-6,), lambda: (_t(X), _t(np.linspace(0.5, 1.5, 4, dtype=np.float32)))),
    "Morph": (ops.Morph, (lambda x: ops.exp(x) * x, lambda s: s, lambda d: d), lambda: (_t(X),)),
}

# outputs that do not depend differentiably on a tensor input: nothing for recompute to change
# (AssignAdd updates a Parameter in place without recording gradients, as an optimizer step)
CONSTANT_OUTPUT = {"Shape", "Zeros", "Ones", "ZerosLike", "OnesLike", "OneHot", "AssignAdd", "LessEqual",
                   "NotEqual", "Equal", "Less"}
# constructed as in MindSpore, raising when called (a device copy; MindSpore runs it in graph mode
# only; the inference kernels over a paged key/value cache GLM2's attention cell builds)
# the output _Probe squares where not the first (ArgMaxWithValue's first is the index)
OUTPUT = {"ArgMaxWithValue": 1}
# run in GRAPH_MODE: MindSpore's Morph raises in PyNative mode, and so does the layer's
GRAPH_ONLY = {"Morph"}
NOT_CALLABLE = {"MoveTo", "ApplyRotaryPosEmb", "PagedAttention", "PagedAttentionMask", "ReshapeAndCache"}


def test_every_primitive_is_covered():
    primitives = {name for name in ops.__all__
                  if isinstance(getattr(ops, name), type) and issubclass(getattr(ops, name), ops.Primitive)}
    assert primitives - {"Primitive"} == set(CASES) | CONSTANT_OUTPUT | NOT_CALLABLE


class _Probe(nn.Cell):
    """``out = prim(*inputs)``; the loss saves ``out`` (``out * out``), so storing it is avoidable."""

    def __init__(self, prim, index=0):
        super().__init__()
        self.prim = prim
        self.index = index

    def construct(self, *inputs):
        out = self.prim(inputs) if isinstance(self.prim, (ops.Concat, ops.Stack)) else self.prim(*inputs)
        out = out[self.index] if isinstance(out, tuple) else out
        return (out * out).sum()


def _run(name: str, mark: bool) -> tuple[int, list]:
    cls, args, make_inputs = CASES[name]
    prim = cls(*args)
    if mark:
        assert prim.recompute() is prim
    calls = [0]
    compute = prim.compute

    def counting(*a, **k):
        calls[0] += 1
        return compute(*a, **k)

    prim.compute = counting
    inputs = make_inputs()
    positions = tuple(i for i, a in enumerate(inputs) if isinstance(a, paddle.Tensor))
    ms.set_seed(3)
    mode = ms.get_context("mode")
    ms.set_context(mode=ms.GRAPH_MODE if name in GRAPH_ONLY else mode)
    try:
        grads = ms.grad(_Probe(prim, OUTPUT.get(name, 0)), positions)(*inputs)
    finally:
        ms.set_context(mode=mode)
    grads = grads if isinstance(grads, tuple) else (grads,)
    return calls[0], [g.numpy() for g in grads]


@pytest.mark.parametrize("name", sorted(CASES))
def test_primitive_recompute_recomputes_and_changes_no_gradient(name):
    calls, grads = _run(name, mark=True)
    base_calls, base = _run(name, mark=False)
    assert (calls, base_calls) == (2, 1)  # forward + the recomputation in backward, versus forward
    for ours, theirs in zip(grads, base, strict=True):
        np.testing.assert_array_equal(ours, theirs)
