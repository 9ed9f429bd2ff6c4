"""``.recompute()`` on plain Paddle Layers (opt-in only), Cell basics, and the grad transforms."""

from __future__ import annotations

import numpy as np
import paddle
import pytest
from _ms_helpers import Block

import paddle_mindspore as ms
from paddle_mindspore import RecomputeMixin, enable_layer_recompute, nn, ops


def _loss_and_grads(block):
    paddle.seed(0)
    x = paddle.randn([3, 4])
    x.stop_gradient = False
    out = block(x).sum()
    out.backward()
    return float(out), x.grad.numpy(), block.fc.weight.grad.numpy()


def test_plain_paddle_layers_are_unchanged():
    assert not hasattr(paddle.nn.Layer, "recompute")
    assert not hasattr(Block(), "recompute")


@pytest.mark.parametrize("options", [{}, {"use_reentrant": False}])
def test_enable_layer_recompute_opts_in_one_instance(options):
    paddle.seed(1)
    plain = Block()
    paddle.seed(1)
    block = enable_layer_recompute(Block())
    assert isinstance(block, Block) and type(block).__name__ == "Block"
    assert not hasattr(Block(), "recompute") and not hasattr(plain, "recompute")
    assert block.recompute(**options) is None
    Block.calls = 0
    ours = _loss_and_grads(block)
    assert Block.calls == 2  # forward + recomputation
    base = _loss_and_grads(plain)
    for a, b in zip(ours, base, strict=True):
        np.testing.assert_array_equal(a, b)
    assert enable_layer_recompute(block) is block


def test_mixin_on_a_paddle_layer_class():
    class MixedBlock(RecomputeMixin, Block):
        pass

    block = MixedBlock()
    block.recompute()
    Block.calls = 0
    _loss_and_grads(block)
    assert Block.calls == 2
    with pytest.raises(TypeError, match="expected a paddle.nn.Layer"):
        enable_layer_recompute(object())


def test_cell_basics():
    dense = nn.Dense(3, 2)
    assert list(dense.weight.shape) == [2, 3] and not dense.training
    seq = nn.SequentialCell([nn.Dense(3, 3), nn.ReLU()]).set_train()
    assert seq.training and all(c.training for c in seq.cells())
    assert len(seq.trainable_params()) == 2 and len(seq) == 2 and isinstance(seq[1], nn.ReLU)
    cells = nn.CellList([nn.ReLU()])
    cells.append(nn.Flatten())
    cells.insert(0, nn.Dense(2, 2))
    assert [type(c).__name__ for c in cells] == ["Dense", "ReLU", "Flatten"] and len(cells[1:]) == 2
    bn = nn.BatchNorm2d(2)
    assert [n for n, _ in bn.named_buffers()] == ["moving_mean", "moving_variance"]
    assert isinstance(dense.weight, ms.Parameter) and isinstance(dense.weight, ms.Tensor)
    assert ms.Tensor(2.5).dtype == ms.float32 and ms.Tensor([1, 2]).dtype == ms.int64
    assert ms.Tensor(np.ones(2)).dtype == ms.float64 and ms.Tensor(np.ones(2), ms.float16).dtype == ms.float16


def test_init_parameters_data_maps_each_parameter_to_itself():
    net = nn.SequentialCell([nn.Dense(3, 2), nn.BatchNorm1d(2)])
    mapping = net.init_parameters_data()
    params = list(net.get_parameters())
    assert len(mapping) == len(params) == 6 and all(mapping[p] is p for p in params)


def test_conv2d_subclass_calls_its_own_primitives_on_another_weight():
    class Doubled(nn.Conv2d):  # mindcv's StdConv2d pattern: self.conv2d on a derived weight
        def construct(self, x):
            return self.bias_add(self.conv2d(x, self.weight * 2), self.bias)

    ms.set_seed(0)
    plain = nn.Conv2d(2, 3, 3, pad_mode="pad", padding=1, has_bias=True, bias_init="zeros")
    doubled = Doubled(2, 3, 3, pad_mode="pad", padding=1, has_bias=True, bias_init="zeros")
    doubled.weight.set_data(plain.weight * 1)
    x = ms.Tensor(np.random.default_rng(0).standard_normal((1, 2, 5, 5)).astype(np.float32))
    np.testing.assert_array_equal(doubled(x).numpy(), 2 * plain(x).numpy())  # times 2: exact


def test_conv1d_is_mindspores_conv2d_over_one_row():
    """MindSpore's Conv1d weight is (out, in / group, 1, k) (coat's ``aggregate`` in the recorded zoo);
    a 3-D weight_init Tensor gains the axis."""
    w = np.arange(24, dtype=np.float32).reshape(4, 3, 2) / 10
    conv = nn.Conv1d(3, 4, 2, pad_mode="valid", weight_init=ms.Tensor(w))
    assert list(conv.weight.shape) == [4, 3, 1, 2]
    x = np.random.default_rng(0).standard_normal((1, 3, 5)).astype(np.float32)
    expected = np.stack([np.einsum("oik,ik->o", w, x[0, :, i:i + 2]) for i in range(4)], axis=-1)
    np.testing.assert_allclose(conv(ms.Tensor(x)).numpy()[0], expected, rtol=1e-5)  # float32 sums
    with pytest.raises(ValueError, match="rank 3"):
        nn.Conv1d(3, 4, 2, weight_init=ms.Tensor(w[None]))


def test_batchnorm_statistics_update_once_per_step_under_recompute():
    def run(recompute):
        ms.set_seed(0)  # initialisers draw from numpy, as MindSpore's do
        cell = nn.SequentialCell([nn.Conv2d(2, 2, 3), nn.BatchNorm2d(2), nn.ReLU()]).set_train()
        if recompute:
            cell.recompute()
        x = ms.Tensor(np.random.RandomState(0).rand(2, 2, 4, 4).astype(np.float32))
        ms.grad(cell, None, cell.trainable_params())(x)
        return [b.numpy() for b in cell.buffers()]

    for ours, base in zip(run(True), run(False), strict=True):
        np.testing.assert_array_equal(ours, base)


def test_grad_structures():
    w = ms.Parameter(ms.Tensor(np.array([2.0, 3.0], np.float32)))

    def fn(x, y):
        return (x * y * w).sum(), x

    x, y = ms.Tensor(np.array([1.0, 1.0], np.float32)), ms.Tensor(np.array([4.0, 5.0], np.float32))
    gx = ms.grad(fn, has_aux=True)(x, y)
    assert gx[0].numpy().tolist() == [8.0, 15.0] and len(gx[1]) == 1
    (gx, gy), gw = ms.grad(fn, (0, 1), w, has_aux=True)(x, y)[0]
    assert gy.numpy().tolist() == [2.0, 3.0] and gw.numpy().tolist() == [4.0, 5.0]
    value, (gw,) = ms.value_and_grad(lambda a: (a * w).sum(), None, [w])(x)
    assert float(value) == 5.0 and gw.numpy().tolist() == [1.0, 1.0]
    assert w.grad is None  # functional transforms do not accumulate into .grad


def test_grad_operation_modes():
    w = ms.Parameter(ms.Tensor(np.array([2.0], np.float32)))

    class Net(nn.Cell):
        def construct(self, a, b):
            return a * b * w

    a, b = ms.Tensor(np.array([3.0], np.float32)), ms.Tensor(np.array([5.0], np.float32))
    assert ops.GradOperation()(Net())(a, b).numpy().tolist() == [10.0]
    ga, gb = ops.GradOperation(get_all=True)(Net())(a, b)
    assert gb.numpy().tolist() == [6.0]
    (gw,) = ops.GradOperation(get_by_list=True)(Net(), ms.ParameterTuple([w]))(a, b)
    assert gw.numpy().tolist() == [15.0]
    (ga, gb), (gw,) = ops.GradOperation(get_all=True, get_by_list=True)(Net(), [w])(a, b)
    assert ga.numpy().tolist() == [10.0]
    sens = ms.Tensor(np.array([2.0], np.float32))
    assert ops.GradOperation(sens_param=True)(Net())(a, b, sens).numpy().tolist() == [20.0]


def test_unused_input_gets_zero_gradient():
    grads = ms.grad(lambda a, b: (a * 2).sum(), (0, 1))(ms.Tensor([1.0]), ms.Tensor([1.0]))
    assert grads[1].numpy().tolist() == [0.0]


@pytest.mark.parametrize("parent,child", [({}, {}), ({}, {"use_reentrant": False}),
                                          ({"use_reentrant": False}, {}),
                                          ({"use_reentrant": False}, {"use_reentrant": False})])
def test_child_recomputed_inside_a_recomputed_parent(parent, child):
    """MindSpore allows Cell.recompute on a child after its parent; the gradients do not change."""
    def run(nested):
        ms.set_seed(0)
        inner = nn.SequentialCell([nn.Dense(4, 4), nn.ReLU()])
        outer = nn.SequentialCell([inner, nn.Dense(4, 2)])
        if nested:
            outer.recompute(**parent)
            inner.recompute(**child)
        x = ms.Tensor(np.random.RandomState(0).rand(3, 4).astype(np.float32))
        return [g.numpy() for g in ms.grad(outer, 0, outer.trainable_params())(x)[1]]

    for ours, base in zip(run(True), run(False), strict=True):
        np.testing.assert_array_equal(ours, base)


class KwargCell(nn.Cell):
    calls = 0

    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 3)

    def construct(self, x, scale=1.0, debug=None, offload_indices=None, bias=None):
        KwargCell.calls += 1
        assert debug == 1 and offload_indices == "kept"  # reached the block, not paddle_recompute
        # tanh saves its output, which a rerun must give back (inputs and weights come back
        # as themselves: NOTE [ Saved leaves ], so a block of them alone has nothing to rerun)
        return ms.ops.tanh(self.fc(x)) * scale + bias


@pytest.mark.parametrize("options", [{}, {"use_reentrant": False}, {"output_recompute": True}],
                         ids=["reentrant", "non_reentrant", "output_recompute"])
@pytest.mark.parametrize("entry", ["mindspore.recompute", "Cell.recompute"])
def test_block_keyword_arguments_reach_the_block(options, entry):
    """recompute(block, *args, **kwargs) passes every kwarg to the block, even ones named like
    paddle_recompute.recompute options (debug, offload_indices); tensor kwargs get gradients."""
    ms.set_seed(0)
    cell = KwargCell()
    x = ms.Tensor(np.random.RandomState(0).rand(2, 3).astype(np.float32))
    bias = ms.Tensor(np.full((3,), 0.5, np.float32))
    extra = {"scale": 3.0, "debug": 1, "offload_indices": "kept"}

    def plain(t, b):
        return cell(t, bias=b, **extra).sum()

    if entry == "Cell.recompute":
        def recomputed(t, b):
            return cell(t, bias=b, **extra).sum()
    else:
        def recomputed(t, b):
            return ms.recompute(cell, t, bias=b, **extra, **options).sum()

    expected = ms.grad(plain, (0, 1), cell.trainable_params())(x, bias)
    if entry == "Cell.recompute":
        cell.recompute(**options)
    KwargCell.calls = 0
    ours = ms.grad(recomputed, (0, 1), cell.trainable_params())(x, bias)
    assert KwargCell.calls >= 2  # recomputed
    for a, b in zip(ours[0] + ours[1], expected[0] + expected[1], strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_loss_and_optimizers_follow_mindspores_formulas():
    logits = np.array([[1.0, 2.0, 0.5], [0.1, -1.0, 3.0]], np.float32)
    labels = np.array([1, 2], np.int32)
    wide = logits.astype(np.float64)
    log_softmax = wide - np.log(np.exp(wide).sum(1, keepdims=True))
    expected = -log_softmax[np.arange(2), labels]
    sparse_mean = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    loss = sparse_mean(ms.Tensor(logits), ms.Tensor(labels))
    np.testing.assert_allclose(float(loss), expected.mean(), atol=1e-6)  # float32 kernel vs float64
    one_hot = ms.Tensor(np.eye(3, dtype=np.float32)[labels])
    dense = nn.SoftmaxCrossEntropyWithLogits()(ms.Tensor(logits), one_hot)
    np.testing.assert_allclose(dense.numpy(), expected, atol=1e-6)

    w = ms.Parameter(ms.Tensor(np.array([1.0, 2.0], np.float32)))
    momentum = nn.Momentum([w], learning_rate=0.5, momentum=0.9)
    grad = ms.Tensor(np.array([1.0, -2.0], np.float32))
    momentum([grad])  # accum = g; w -= lr * accum
    momentum([grad])  # accum = 0.9 * g + g
    np.testing.assert_allclose(w.numpy(), [1.0 - 0.5 * (1 + 1.9), 2.0 + 0.5 * 2 * (1 + 1.9)], rtol=1e-6)
    v = ms.Parameter(ms.Tensor(np.array([1.0], np.float32)))
    nn.SGD([v], learning_rate=0.25)([ms.Tensor(np.array([2.0], np.float32))])
    assert v.numpy().tolist() == [0.5]
