"""``Primitive.recompute()`` takes effect (as in MindSpore's graph mode): proven by counting the
operator's calls and by the host memory held between forward and backward."""

from __future__ import annotations

import numpy as np
import paddle
import pytest

import paddle_mindspore as ms
import paddle_recompute
from paddle_mindspore import nn, ops

N = 1024  # the marked output is N x N float32: 4 MiB


class CountingAdd(ops.Add):
    calls = 0

    def compute(self, x, y):
        CountingAdd.calls += 1
        return super().compute(x, y)


class Outer(nn.Cell):
    """y = col + row (N x N from two N-vectors); the loss saves y twice (y * y)."""

    def __init__(self, mark: bool):
        super().__init__()
        self.add = CountingAdd()
        if mark:
            self.add.recompute()
        self.mul = ops.Mul()
        self.row = ms.Parameter(ms.Tensor(np.linspace(0, 1, N, dtype=np.float32).reshape(1, N)))

    def construct(self, col):
        y = self.add(col, self.row)
        return self.mul(y, y).sum()


def _column():
    col = ms.Tensor(np.linspace(-1, 1, N, dtype=np.float32).reshape(N, 1))
    col.stop_gradient = False
    return col


def _grads(mark: bool) -> tuple[int, np.ndarray, np.ndarray]:
    CountingAdd.calls = 0
    net = Outer(mark)
    g_col, (g_row,) = ms.grad(net, grad_position=0, weights=net.trainable_params())(_column())
    return CountingAdd.calls, g_col.numpy(), g_row.numpy()


def test_marked_operator_runs_again_in_backward_once_for_all_consumers():
    calls, g_col, g_row = _grads(mark=True)
    base_calls, base_col, base_row = _grads(mark=False)
    assert base_calls == 1
    assert calls == 2  # forward + one recomputation shared by both saved uses of y
    np.testing.assert_array_equal(g_col, base_col)
    np.testing.assert_array_equal(g_row, base_row)


def test_marked_operator_output_is_not_held_between_forward_and_backward(memory_stats):
    held = {}
    for mark in (False, True):
        net, col = Outer(mark), _column()
        before = memory_stats()
        loss = net(col)  # a Cell call: the recipe scope is open during its forward
        held[mark] = memory_stats() - before
        loss.backward()
        del loss, net
    assert held[False] >= N * N * 4
    assert held[True] < held[False] - 0.9 * N * N * 4, held


def test_unmarking_turns_it_off():
    net = Outer(mark=True)
    net.add.recompute(False)
    CountingAdd.calls = 0
    ms.grad(net)(_column())
    assert CountingAdd.calls == 1


def test_chain_of_marked_operators_keeps_only_the_chain_input(memory_stats):
    """relu(add(col, row)) with both marked: neither N x N intermediate is held."""
    class Chain(nn.Cell):
        def __init__(self, mark):
            super().__init__()
            self.add, self.relu, self.mul = ops.Add(), ops.ReLU(), ops.Mul()
            if mark:
                self.add.recompute()
                self.relu.recompute()
            self.row = ms.Parameter(ms.Tensor(np.linspace(0, 1, N, dtype=np.float32).reshape(1, N)))

        def construct(self, col):
            z = self.relu(self.add(col, self.row))
            return self.mul(z, z).sum()

    held, grads = {}, {}
    for mark in (False, True):
        net, col = Chain(mark), _column()
        before = memory_stats()
        loss = net(col)
        held[mark] = memory_stats() - before
        loss.backward()
        grads[mark] = (col.grad.numpy(), net.row.grad.numpy())
    assert held[True] < held[False] - 0.9 * N * N * 4, held
    for ours, base in zip(grads[True], grads[False], strict=True):
        np.testing.assert_array_equal(ours, base)


def test_marked_primitive_outside_a_scope_behaves_like_mindspore_pynative():
    """Called from plain code (no Cell, no grad function) the mark is inert, as in PyNative."""
    CountingAdd.calls = 0
    add = CountingAdd().recompute()
    x = paddle.ones([4, 1])
    x.stop_gradient = False
    (add(x, paddle.ones([1, 4])) ** 2).sum().backward()
    assert CountingAdd.calls == 1


@pytest.mark.parametrize("seeded", [False, True], ids=["global_seed", "Seed0_Seed1"])
def test_marked_dropout_recomputes_the_same_mask(seeded):
    class Drop(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dropout = ops.Dropout(0.5, 1, 2) if seeded else ops.Dropout(0.5)
            self.dropout.recompute()
            self.mul = ops.Mul()

        def construct(self, x):
            out, mask = self.dropout(x)
            return self.mul(out, out).sum(), mask

    x = ms.Tensor(np.full((4, 64), 3.0, np.float32))
    (loss, mask), grad = ms.value_and_grad(Drop(), 0, has_aux=True)(x)
    kept = mask.numpy() != 0
    assert 0 < kept.sum() < kept.size
    np.testing.assert_array_equal(grad.numpy() != 0, kept)  # backward used the forward mask
    np.testing.assert_allclose(grad.numpy()[kept], 2 * 3.0 * 2 * 2)  # d/dx (2x)^2 = 8x with scale 2


def test_in_place_writes_are_guarded():
    """A marked output written in place is saved as is; a recipe whose input changed refuses."""
    class WritesOutput(nn.Cell):
        def __init__(self):
            super().__init__()
            self.add = CountingAdd().recompute()

        def construct(self, col):
            y = self.add(col, 1.0)
            y.add_(paddle.ones_like(y))  # y is no longer what the recipe would compute
            return (y * y).sum()

    class WritesInput(nn.Cell):
        def __init__(self):
            super().__init__()
            self.add = CountingAdd().recompute()

        def construct(self, col):
            base = col * 1.0
            y = self.add(base, 1.0)
            out = (y * y).sum()
            base.add_(paddle.ones_like(base))  # the recipe's input changed after the forward
            return out

    col = ms.Tensor(np.ones((4, 1), np.float32))
    np.testing.assert_array_equal(ms.grad(WritesOutput())(col).numpy(), np.full((4, 1), 6.0, np.float32))
    # Paddle re-raises errors from unpack hooks as OSError carrying the message
    errors = (paddle_recompute.RecomputeError, OSError)
    with pytest.raises(errors, match="modified in place after the forward"):
        ms.grad(WritesInput())(col)


def test_a_grad_flagged_cells_reused_forward_still_recomputes_the_marked_operator():
    """The forward recorded by ``set_grad`` and reused by the transform saves through the
    recipes' frame: the marked output is computed again in backward, once."""
    CountingAdd.calls = 0
    net = Outer(mark=True).set_grad()
    col = _column()
    net(col)
    g_col, (g_row,) = ms.grad(net, grad_position=0, weights=net.trainable_params())(col)
    assert CountingAdd.calls == 2  # the one forward + the recomputation
    _, base_col, base_row = _grads(mark=False)
    np.testing.assert_array_equal(g_col.numpy(), base_col)
    np.testing.assert_array_equal(g_row.numpy(), base_row)


class _MatMulChain(nn.Cell):
    """x @ W1 @ ... @ WL with one marked operator: each matmul saves its input, and backward
    makes each W's gradient (as large) while it walks back, so a step that frees each saved
    input once its matmul's backward has run peaks near L activations; one that keeps them all
    to the end of backward peaks near L activations plus L gradients."""

    def __init__(self, layers: int, width: int):
        super().__init__()
        rng = np.random.default_rng(0)
        values = [(rng.standard_normal((width, width)) / width).astype(np.float32) for _ in range(layers)]
        self.weights = [ms.Parameter(ms.Tensor(v), name=f"w{i}") for i, v in enumerate(values)]
        self.matmuls = [ops.MatMul() for _ in range(layers)]
        self.neg = ops.Neg().recompute()  # any mark turns the layer's saved-tensor frame on

    def construct(self, x):
        for matmul, w in zip(self.matmuls, self.weights, strict=True):
            x = matmul(x, w)
        return self.neg(x).sum()


def _step_peak(net: _MatMulChain, x, through_cell: bool) -> tuple[int, list]:
    from paddle.base import core

    for w in net.weights:
        w.clear_gradient(False)
    before = core.host_memory_stat_current_value("Allocated", 0)
    core.host_memory_stat_reset_peak_value("Allocated", 0)
    loss = net(x) if through_cell else net.construct(x)  # construct: no recipe scope, plain Paddle
    loss.backward()
    peak = core.host_memory_stat_peak_value("Allocated", 0) - before
    grads = [loss.numpy()] + [w.grad.numpy() for w in net.weights]
    del loss
    return peak, grads


def test_marked_primitives_do_not_keep_saved_tensors_to_the_end_of_backward(memory_stats):
    layers, width = 6, 256  # each activation and gradient: 256 KiB
    net = _MatMulChain(layers, width)
    x = ms.Tensor(np.linspace(-1, 1, width * width, dtype=np.float32).reshape(width, width))
    plain_peak, plain_grads = _step_peak(net, x, through_cell=False)
    peak, grads = _step_peak(net, x, through_cell=True)
    assert plain_peak >= layers * width * width * 4  # the activations were measured
    assert peak <= plain_peak, (peak, plain_peak)
    for ours, base in zip(grads, plain_grads, strict=True):
        np.testing.assert_array_equal(ours, base)


def test_backward_through_a_retained_graph_recomputes_once_per_backward():
    grads = {}
    for mark in (False, True):
        CountingAdd.calls = 0
        net, col = Outer(mark), _column()
        loss = net(col)
        loss.backward(retain_graph=True)
        loss.backward()
        grads[mark] = (col.grad.numpy(), net.row.grad.numpy())
    assert CountingAdd.calls == 3  # forward + one recomputation per backward
    for ours, base in zip(grads[True], grads[False], strict=True):
        np.testing.assert_array_equal(ours, base)
