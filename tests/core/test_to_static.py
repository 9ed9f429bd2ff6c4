"""``paddle.jit.to_static`` (NOTE [ to_static ] in ``_core/to_static.py``).

Under SOT (the default mode) a region runs eagerly at a graph break: the same losses and
gradients as without recompute, and the forward holds no more than Paddle's built-in
reentrant recompute holds under SOT.  Under ``full_graph=True`` a region is Paddle's static
marking: a warning once, and a ``RecomputeError`` for options that cannot work there.
"""

from __future__ import annotations

import gc
import warnings

import numpy as np
import paddle
import pytest
from paddle import nn
from paddle.base import core
from paddle.distributed.fleet.utils import recompute as builtin

import paddle_recompute as pr
from paddle_recompute import policies
from paddle_recompute._core import hooks as _hooks
from paddle_recompute._core import to_static as _to_static

DIM = 32


class Block(nn.Layer):
    def __init__(self, p=0.0):
        super().__init__()
        self.a, self.b = nn.Linear(DIM, 4 * DIM), nn.Linear(4 * DIM, DIM)
        self.drop = nn.Dropout(p)

    def forward(self, x):
        return x + self.b(self.drop(nn.functional.gelu(self.a(x))))


RUNNERS = {
    "none": lambda b, x: b(x),
    "builtin": lambda b, x: builtin(b, x),
    "reentrant": lambda b, x: pr.recompute(b, x, use_reentrant=True),
    "non-reentrant": lambda b, x: pr.recompute(b, x, use_reentrant=False),
    "policy": lambda b, x: pr.recompute(b, x, use_reentrant=False, policy=policies.save_matmuls),
}


class Net(nn.Layer):
    def __init__(self, runner, p=0.0, n=4):
        super().__init__()
        self.blocks = nn.LayerList([Block(p) for _ in range(n)])
        self.runner = RUNNERS[runner]

    def forward(self, x):
        for block in self.blocks:
            x = self.runner(block, x)
        return x


def _input(rows=16):
    x = paddle.to_tensor(np.linspace(-1, 1, rows * DIM, dtype="float32").reshape(rows, DIM))
    x.stop_gradient = False
    return x


def _train(net, call, steps=2, seed=None):
    """Losses, input gradients and parameter gradients of ``steps`` steps of ``call``."""
    out = []
    for step in range(steps):
        if seed is not None:
            paddle.seed(seed + step)
        x = _input()
        loss = (call(x) ** 2).mean()
        loss.backward()
        out += [loss.numpy(), x.grad.numpy()] + [p.grad.numpy() for p in net.parameters()]
        net.clear_gradients()
    return out


def _assert_same(got, expected):
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)


def _net(runner, p=0.0):
    paddle.seed(0)
    return Net(runner, p)


@pytest.mark.parametrize("runner", ["reentrant", "non-reentrant", "policy"])
def test_model_decorated_whole_trains_exactly(runner):
    expected = _train(net := _net("none"), net)
    net = _net(runner)
    _assert_same(_train(net, paddle.jit.to_static(net)), expected)
    assert not _hooks.active_frames()


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_block_decorated_on_its_own(use_reentrant):
    expected = _train(net := _net("none"), net)
    net = _net("none")
    static_blocks = [paddle.jit.to_static(b) for b in net.blocks]

    def call(x):
        for block in static_blocks:
            x = pr.recompute(block, x, use_reentrant=use_reentrant)
        return x

    _assert_same(_train(net, call), expected)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_region_inside_a_decorated_function(use_reentrant):
    expected = _train(net := _net("none"), net)
    net = _net("none")

    @paddle.jit.to_static
    def call(x):
        h = paddle.tanh(x) * 0.5 + x * 0.5  # compiled around the regions
        for block in net.blocks:
            h = pr.recompute(block, h, use_reentrant=use_reentrant)
        return h

    def plain(x):
        h = paddle.tanh(x) * 0.5 + x * 0.5
        for block in net.blocks:
            h = block(h)
        return h

    expected = _train(net, plain)
    _assert_same(_train(net, call), expected)


@pytest.mark.parametrize("runner", ["reentrant", "non-reentrant"])
def test_dropout_inside_the_region(runner):
    """The rerun replays the forward's masks: the same numbers as no recompute, eagerly."""
    expected = _train(net := _net("none", p=0.3), net, seed=5)
    net = _net(runner, p=0.3)
    _assert_same(_train(net, paddle.jit.to_static(net), seed=5), expected)


def _held_after_forward(runner) -> int:
    """Host bytes the first forward of a decorated 4-block model leaves allocated."""
    paddle.seed(0)
    net = Net(runner)
    call = paddle.jit.to_static(net)
    x = paddle.randn([256, DIM])
    x.stop_gradient = False
    gc.collect()  # earlier models' programs and graphs are freed before, not during, the forward
    before = core.host_memory_stat_current_value("Allocated", 0)
    loss = (call(x) ** 2).mean()
    held = core.host_memory_stat_current_value("Allocated", 0) - before
    loss.backward()
    return held


def test_forward_holds_no_more_than_the_builtin_under_sot():
    held = {r: _held_after_forward(r) for r in ("none", "builtin", "reentrant", "non-reentrant")}
    hidden = 256 * 4 * DIM * 4  # one block's hidden layer, float32
    assert held["none"] > 4 * hidden, held  # every block's activations are kept
    assert 4 * held["builtin"] < held["none"], held  # the premise: the built-in does not keep them
    assert held["reentrant"] <= held["builtin"], held
    assert held["non-reentrant"] <= held["builtin"], held


def test_full_graph_warns_once_and_matches_no_recompute(monkeypatch):
    monkeypatch.setattr(_to_static, "_WARNED", [])
    expected = _train(net := _net("none"), net)
    net = _net("non-reentrant")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = _train(net, paddle.jit.to_static(net, full_graph=True))
    _assert_same(got, expected)
    ours = [w for w in caught if "paddle_recompute.recompute" in str(w.message)]
    assert len(ours) == 1, [str(w.message) for w in caught]
    assert "static recompute pass" in str(ours[0].message)
    assert ours[0].filename == __file__  # points at the caller's line


def test_full_graph_policy_region_raises_and_leaves_state_clean(monkeypatch):
    monkeypatch.setattr(_to_static, "_WARNED", [True])  # warned already: this test is about the error
    net = _net("policy")
    with pytest.raises(pr.RecomputeError, match=r"`policy` cannot work inside paddle\.jit\.to_static"):
        paddle.jit.to_static(net, full_graph=True)(_input())
    assert not _hooks.active_frames() and paddle.is_grad_enabled()
    net = _net("non-reentrant")  # and a full-graph region still works afterwards
    paddle.jit.to_static(net, full_graph=True)(_input()).sum().backward()
