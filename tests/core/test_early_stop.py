"""Early stop (non-reentrant): the rerun ends once every tensor backward needs is back.

See NOTE [ Early stop ] in ``_core/stop.py``: stopping costs a line tracer and an exception
through the rest of the region (a few µs), so it is only used when the forward's tail (the
part of the region after its last saved tensor) took longer than ``EARLY_STOP_MIN_TAIL_NS``.
"""

import time

import numpy as np
import paddle
import pytest
from _rc_helpers import RunCount
from paddle import nn

from paddle_recompute import recompute
from paddle_recompute._core import hooks as _hooks
from paddle_recompute._core import nonreentrant as _nonreentrant

SLOW_TAIL_S = 0.002  # 200x EARLY_STOP_MIN_TAIL_NS (10 µs)


class SlowTail(nn.Layer):
    """Saves nothing for backward (``scale``'s gradient needs no forward tensor), but slow."""

    def __init__(self, sleep_s: float):
        super().__init__()
        self.sleep_s = sleep_s

    calls = RunCount()  # forward runs, reruns included

    def forward(self, x):
        self.calls += 1
        if self.sleep_s:
            time.sleep(self.sleep_s)
        return paddle.scale(x, scale=1.0)


class Block(nn.Layer):
    def __init__(self, sleep_s: float):
        super().__init__()
        self.linear = nn.Linear(5, 5)
        self.tail = SlowTail(sleep_s)

    def forward(self, x):
        return self.tail(paddle.tanh(self.linear(x)))


def run(options, sleep_s=SLOW_TAIL_S):
    paddle.seed(13)
    block = Block(sleep_s)
    head = nn.Linear(5, 2)
    paddle.seed(14)
    x = paddle.randn([4, 5])
    x.stop_gradient = False
    h = block(x) if options is None else recompute(block, x, use_reentrant=False, **options)
    loss = (head(h) ** 2).sum()
    calls_after_forward = block.tail.calls
    loss.backward()
    grads = [x.grad.numpy()] + [p.grad.numpy() for p in (*block.parameters(), *head.parameters())]
    return calls_after_forward, block.tail.calls, grads


def assert_same(got, expected):
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)


def test_scale_saves_nothing_for_backward():
    """The premise of the tests: the trailing op hands no tensor to the hooks."""
    packed = []
    x = paddle.randn([2, 3])
    x.stop_gradient = False
    with paddle.autograd.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        paddle.scale(x, scale=1.0)
    assert packed == []


def test_early_stop_skips_the_slow_trailing_sublayer():
    _, _, expected = run(None)
    forward_calls, total_calls, grads = run({"early_stop": True})
    assert forward_calls == 1
    assert total_calls == 1  # forward only: the rerun stopped after tanh's saved output
    assert_same(grads, expected)
    assert paddle.is_grad_enabled()
    assert not _hooks.active_frames()


def test_without_early_stop_the_trailing_sublayer_runs_again():
    _, _, expected = run(None)
    forward_calls, total_calls, grads = run({"early_stop": False})
    assert (forward_calls, total_calls) == (1, 2)
    assert_same(grads, expected)


def test_default_is_early_stop():
    assert run({})[1] == 1


def test_fast_tail_is_rerun_rather_than_stopped(monkeypatch):
    """Below the threshold the rerun runs to the end (stopping would cost more)."""
    monkeypatch.setattr(_nonreentrant, "EARLY_STOP_MIN_TAIL_NS", 10**12)  # no tail is that slow
    _, _, expected = run(None, sleep_s=0)
    _, total_calls, grads = run({"early_stop": True}, sleep_s=0)
    assert total_calls == 2
    assert_same(grads, expected)


def test_stop_with_any_tail_when_the_threshold_is_zero(monkeypatch):
    monkeypatch.setattr(_nonreentrant, "EARLY_STOP_MIN_TAIL_NS", -1)
    _, _, expected = run(None, sleep_s=0)
    _, total_calls, grads = run({"early_stop": True}, sleep_s=0)
    assert total_calls == 1
    assert_same(grads, expected)


class DropoutBlock(nn.Layer):
    """Random ops before the stop point, a slow tail after it."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(6, 6)
        self.dropout = nn.Dropout(0.5)
        self.tail = SlowTail(SLOW_TAIL_S)

    def forward(self, x):
        return self.tail(paddle.tanh(self.dropout(self.linear(x))))


@pytest.mark.parametrize("early_stop", [True, False])
def test_early_stop_replays_and_restores_rng(early_stop):
    def step(use_recompute):
        paddle.seed(17)
        block = DropoutBlock()
        x = paddle.randn([4, 6])
        x.stop_gradient = False
        h = recompute(block, x, use_reentrant=False, early_stop=early_stop) if use_recompute else block(x)
        (h**2).sum().backward()
        after = paddle.rand([3]).numpy()  # the next draw: backward left the generator as it was
        return block, [x.grad.numpy()] + [p.grad.numpy() for p in block.parameters()], after

    _, expected, after_plain = step(False)
    block, grads, after = step(True)
    assert_same(grads, expected)  # equal dropout masks in the rerun
    np.testing.assert_array_equal(after, after_plain)
    assert block.tail.calls == (1 if early_stop else 2)


def test_early_stop_in_nested_regions():
    def step(mode):
        paddle.seed(19)
        inner, outer_lin = Block(SLOW_TAIL_S), nn.Linear(5, 5)

        def outer(x):
            h = paddle.tanh(outer_lin(x))
            return inner(h) if mode is None else recompute(inner, h, use_reentrant=False)

        x = paddle.randn([3, 5])
        x.stop_gradient = False
        out = outer(x) if mode is None else recompute(outer, x, use_reentrant=False)
        (out**2).sum().backward()
        return inner.tail.calls, [x.grad.numpy()] + [p.grad.numpy() for p in
                                                    (*outer_lin.parameters(), *inner.parameters())]

    plain_calls, expected = step(None)
    calls, grads = step(False)
    assert plain_calls == 1
    # Forward once.  The outer region saves nothing after the inner one (its output is
    # only squared outside), its rerun is needed for tanh(outer_lin(x)) only and stops
    # there; the inner rerun stops after its tanh: the slow tail never reruns.
    assert calls == 1
    assert_same(grads, expected)


class SwallowingBlock(Block):
    """Catches ``Exception`` around its tail: the stop must still get through."""

    def forward(self, x):
        h = paddle.tanh(self.linear(x))
        try:
            h = self.tail(h)
        except Exception:  # noqa: BLE001 - the point of the test
            h = h * 0
        return h


def test_early_stop_passes_through_user_except_exception(monkeypatch):
    monkeypatch.setattr(_nonreentrant, "EARLY_STOP_MIN_TAIL_NS", -1)
    paddle.seed(13)
    block = SwallowingBlock(0)
    x = paddle.randn([4, 5])
    x.stop_gradient = False
    out = recompute(block, x, use_reentrant=False)
    plain = block(x)
    (out * plain.detach()).sum().backward()
    assert block.tail.calls == 2  # the forward and the plain call, not the rerun
    np.testing.assert_array_equal(out.numpy(), plain.numpy())


def test_early_stop_restores_the_callers_trace_function(monkeypatch):
    """A debugger's or coverage's tracer is put back after a stopped rerun."""
    import sys

    monkeypatch.setattr(_nonreentrant, "EARLY_STOP_MIN_TAIL_NS", -1)
    seen = []

    def tracer(frame, event, arg):
        seen.append(event)
        return None

    _, _, expected = run(None, sleep_s=0)
    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        _, total_calls, grads = run({"early_stop": True}, sleep_s=0)
        assert sys.gettrace() is tracer
    finally:
        sys.settrace(previous)
    assert total_calls == 1
    assert seen  # the tracer kept working around the recomputation
    assert_same(grads, expected)
