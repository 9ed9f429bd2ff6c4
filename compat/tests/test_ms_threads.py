"""The recipe registry of ``Primitive.recompute`` is per thread (NOTE [ Recipes ]): a Cell
forward in one thread neither tracks another thread's outputs nor forgets them when its
scope ends."""

from __future__ import annotations

import threading

import numpy as np

import paddle_mindspore as ms
from paddle_mindspore import _recipes, nn, ops


class Marked(nn.Cell):
    """y = col + row, marked recompute; the loss saves y twice.  ``pause`` runs between the
    marked operator and its consumers, with this thread's scope open."""

    def __init__(self, pause=lambda: None):
        super().__init__()
        self.add = ops.Add()
        self.add.recompute()
        self.mul = ops.Mul()
        self.row = ms.Parameter(ms.Tensor(np.linspace(0, 1, 8, dtype=np.float32).reshape(1, 8)))
        self.pause = pause
        self.calls = 0
        self.tracked = []

    def construct(self, col):
        y = self.add(col, self.row)
        self.tracked.append(_recipes.lookup(y) is not None)
        self.pause()
        self.tracked.append(_recipes.lookup(y) is not None)  # still registered after the pause
        return self.mul(y, y).sum()


def _column():
    col = ms.Tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(8, 1))
    col.stop_gradient = False
    return col


def _grads(net):
    g_col, (g_row,) = ms.grad(net, grad_position=0, weights=net.trainable_params())(_column())
    return g_col.numpy(), g_row.numpy()


def test_a_scope_in_another_thread_neither_sees_nor_clears_this_threads_recipes():
    expected = _grads(Marked())
    a_inside, b_done = threading.Event(), threading.Event()
    seen_by_b = []

    def pause_a():
        a_inside.set()
        b_done.wait(120)

    net_a = Marked(pause_a)
    results = {}

    def thread_a():
        results["a"] = _grads(net_a)

    def thread_b():
        a_inside.wait(120)
        seen_by_b.append((_recipes.tracking(), len(_recipes._LOCAL.entries)))
        results["b"] = _grads(Marked())  # opens and closes its own scope while A's is open
        b_done.set()

    threads = [threading.Thread(target=thread_a), threading.Thread(target=thread_b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen_by_b == [(False, 0)]  # B does not inherit A's open scope or registrations
    assert net_a.tracked == [True, True]  # B's scope ending did not forget A's output
    for got in (results["a"], results["b"]):
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_array_equal(g, e)
