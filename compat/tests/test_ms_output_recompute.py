"""``output_recompute=True``: the cell's output is not stored by what consumes it; with an adjacent
recomputed cell the two recomputations merge (the first cell's output is recomputed when the
second one needs it). Proven by held memory and by counting the cells' calls."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_mindspore as ms
from paddle_mindspore import nn, ops

N = 1024
CALLS = {"first": 0, "second": 0}


class First(nn.Cell):
    """N-vector -> N x N."""

    def __init__(self):
        super().__init__()
        self.add, self.relu = ops.Add(), ops.ReLU()
        self.row = ms.Parameter(ms.Tensor(np.linspace(-0.5, 1, N, dtype=np.float32).reshape(1, N)))

    def construct(self, col):
        CALLS["first"] += 1
        return self.relu(self.add(col, self.row))


class Second(nn.Cell):
    def __init__(self):
        super().__init__()
        self.mul = ops.Mul()

    def construct(self, y):
        CALLS["second"] += 1
        return self.mul(y, y).sum()


class Net(nn.Cell):
    def __init__(self, first: dict | None, second: dict | None):
        super().__init__()
        self.first, self.second = First(), Second()
        if first is not None:
            self.first.recompute(**first)
        if second is not None:
            self.second.recompute(**second)

    def construct(self, col):
        return self.second(self.first(col))


def _column():
    col = ms.Tensor(np.linspace(-1, 1, N, dtype=np.float32).reshape(N, 1))
    col.stop_gradient = False
    return col


def _held_and_grads(net, held_bytes):
    col = _column()
    before = held_bytes()
    loss = net(col)
    held = held_bytes() - before
    loss.backward()
    return held, col.grad.numpy(), net.first.row.grad.numpy()


CONFIGS = {
    "plain": (None, None),
    "both_recompute": ({}, {"use_reentrant": False}),
    "merged": ({"output_recompute": True}, {"use_reentrant": False}),
    "output_recompute_then_plain_ops": ({"output_recompute": True}, None),
}


def test_merge_keeps_neither_output_and_gives_the_same_gradients(memory_stats):
    results = {name: _held_and_grads(Net(*config), memory_stats) for name, config in CONFIGS.items()}
    output_bytes = N * N * 4
    assert results["both_recompute"][0] >= output_bytes  # the second region keeps its input
    assert results["merged"][0] < 0.1 * output_bytes, results["merged"][0]
    assert results["output_recompute_then_plain_ops"][0] < 0.1 * output_bytes
    for name in CONFIGS:
        for ours, base in zip(results[name][1:], results["plain"][1:], strict=True):
            np.testing.assert_array_equal(ours, base, err_msg=name)


def test_merge_recomputes_the_first_cell_when_the_second_needs_its_input():
    CALLS.update(first=0, second=0)
    net = Net({"output_recompute": True}, {"use_reentrant": False})
    ms.grad(net)(_column())
    # forward, the merged input of the second region, the first region's own rerun
    assert CALLS == {"first": 3, "second": 2}


def test_output_recompute_implies_non_reentrant_like_mindspore():
    cell = First()
    cell.recompute(output_recompute=True)
    assert cell._ms_recompute.use_reentrant is False and cell._ms_recompute.output_recompute


@pytest.mark.parametrize("early_stop", [True, False])
def test_functional_output_recompute_chain_matches_plain(early_stop):
    first, second = First(), Second()

    class Chain(nn.Cell):
        def construct(self, col):
            y = ms.recompute(first, col, output_recompute=True, early_stop=early_stop)
            return ms.recompute(second, y, use_reentrant=False, early_stop=early_stop)

    class Plain(nn.Cell):
        def construct(self, col):
            return second(first(col))

    ours = ms.grad(Chain(), 0, first.trainable_params())(_column())
    base = ms.grad(Plain(), 0, first.trainable_params())(_column())
    np.testing.assert_array_equal(ours[0].numpy(), base[0].numpy())
    np.testing.assert_array_equal(ours[1][0].numpy(), base[1][0].numpy())


class TanhCell(nn.Cell):
    """out = tanh(col + row) * 2: tanh keeps its N x N output for backward inside the cell."""

    calls = 0

    def __init__(self):
        super().__init__()
        self.row = ms.Parameter(ms.Tensor(np.linspace(-0.5, 1, N, dtype=np.float32).reshape(1, N)))

    def construct(self, col):
        TanhCell.calls += 1
        return ops.Mul()(ops.Tanh()(ops.Add()(col, self.row)), 2.0)


@pytest.mark.parametrize("options", [{}, {"use_reentrant": False}], ids=["reentrant", "non_reentrant"])
def test_cell_recompute_keeps_its_output_and_nothing_inside(memory_stats, options):
    """MindSpore's Cell.recompute: every operator inside is recomputed, the cell's output is kept."""
    held, grads, calls = {}, {}, {}
    for recompute in (False, True):
        cell = TanhCell()
        if recompute:
            cell.recompute(**options)
        col = _column()
        TanhCell.calls = 0
        before = memory_stats()
        out = cell(col)
        loss = ops.Mul()(out, out).sum()  # the consumer saves the cell's output
        held[recompute] = memory_stats() - before
        loss.backward()
        calls[recompute] = TanhCell.calls
        grads[recompute] = (col.grad.numpy(), cell.row.grad.numpy())
        del out, loss
    output_bytes = N * N * 4
    assert held[True] >= output_bytes  # the output is kept (it is not recomputed) ...
    assert held[True] < held[False] - 0.9 * output_bytes, held  # ... the tanh inside is not
    assert calls == {False: 1, True: 2}
    for ours, base in zip(grads[True], grads[False], strict=True):
        np.testing.assert_array_equal(ours, base)
