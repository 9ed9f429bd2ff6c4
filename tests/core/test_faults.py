"""An exception inside a region, in forward or in recomputation, propagates and leaves the
process as it was: random states, autocast, grad mode and saved-tensor hooks; the next
training step works and matches no recompute.

In forward the exception reaches the caller unchanged.  During recomputation it is raised
inside Paddle's backward engine (a hook or a PyLayer backward), which re-raises it as an
``OSError`` carrying the original type name and message.
"""

import contextlib
import random

import numpy as np
import paddle
import pytest
from _rc_helpers import RunCount, amp_state, tracer_autocast
from paddle import nn
from paddle.base import core, framework

from paddle_recompute import recompute
from paddle_recompute._core import hooks as _hooks


class Boom(Exception):
    pass


class Faulty(nn.Layer):
    """Draws from every generator, then raises on the chosen call.

    It raises after its last saved tensor, so tests of a failing rerun pass
    ``early_stop=False`` (an early-stopped rerun never gets there).
    """

    def __init__(self, fail_on_call: int):
        super().__init__()
        self.lin = nn.Linear(6, 6)
        self.dropout = nn.Dropout(0.3)
        self.fail_on_call = fail_on_call

    calls = RunCount()  # forward runs, reruns included

    def forward(self, x):
        self.calls += 1
        h = self.dropout(paddle.tanh(self.lin(x)))
        noise = float(np.random.rand()) + random.random()  # numpy and Python generators
        h = h * (1.0 + 0.0 * noise)
        if self.calls == self.fail_on_call:
            raise Boom(f"boom on call {self.calls}")
        return h


def rng_snapshot():
    return paddle.get_rng_state(), np.random.get_state(), random.getstate()


def rng_draws():
    """The next numbers of every generator (consumes them)."""
    return paddle.rand([4]).numpy(), np.random.rand(4), [random.random() for _ in range(4)]


def assert_same_draws(a, b):
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def assert_clean():
    assert paddle.is_grad_enabled()
    assert framework._dygraph_tracer()._amp_level == core.AmpLevel.O0
    assert _hooks.active_frames() == () and not _hooks.installed()
    # Paddle accepts a raw hook pair again: ours are not installed any more.
    with paddle.autograd.saved_tensors_hooks(lambda t: t, lambda t: t):
        x = paddle.ones([2])
        x.stop_gradient = False
        (x * x).sum().backward()


def make_x():
    x = paddle.randn([3, 6])
    x.stop_gradient = False
    return x


def next_step_matches_no_recompute(use_reentrant):
    def step(use_recompute):
        paddle.seed(77)
        model = nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.2), nn.Tanh(), nn.Linear(6, 6))
        x = make_x()
        out = recompute(model, x, use_reentrant=use_reentrant) if use_recompute else model(x)
        (out**2).mean().backward()
        return [x.grad.numpy()] + [p.grad.numpy() for p in model.parameters()]

    for a, b in zip(step(True), step(False), strict=True):
        np.testing.assert_array_equal(a, b)


# --------------------------------------------------------------------------- in forward


def forward_fault(runner):
    paddle.seed(5)
    np.random.seed(5)
    random.seed(5)
    model = Faulty(fail_on_call=1)
    x = make_x()
    with pytest.raises(Boom) as info:
        runner(model, x)
    return str(info.value), rng_draws()


def test_forward_exception_propagates_unchanged_and_leaves_state_clean(use_reentrant):
    expected_message, expected_draws = forward_fault(lambda m, x: m(x))
    message, draws = forward_fault(lambda m, x: recompute(m, x, use_reentrant=use_reentrant))
    assert message == expected_message == "boom on call 1"
    # Random state as after the same failing call without recompute.
    assert_same_draws(draws, expected_draws)
    assert_clean()
    next_step_matches_no_recompute(use_reentrant)


def test_forward_exception_under_autocast_keeps_the_context_state(use_reentrant):
    model = Faulty(fail_on_call=1)
    with tracer_autocast():
        inside = amp_state()
        with pytest.raises(Boom):
            recompute(model, make_x(), use_reentrant=use_reentrant)
        assert amp_state() == inside
    assert_clean()


def test_forward_exception_in_a_nested_region(use_reentrant):
    inner = Faulty(fail_on_call=1)

    def outer(x):
        return recompute(inner, paddle.tanh(x), use_reentrant=False)

    with pytest.raises(Boom, match="boom on call 1"):
        recompute(outer, make_x(), use_reentrant=use_reentrant)
    assert_clean()
    next_step_matches_no_recompute(use_reentrant)


# --------------------------------------------------------------------------- in recomputation


@pytest.mark.parametrize("autocast", [False, True], ids=["fp32", "autocast"])
def test_recomputation_exception_is_carried_and_leaves_state_clean(use_reentrant, autocast):
    model = Faulty(fail_on_call=2)
    x = make_x()
    with tracer_autocast() if autocast else contextlib.nullcontext():
        # early_stop=False: Faulty raises after its last saved tensor, where an early-stopped
        # rerun would (rightly) never get to
        out = recompute(model, x, use_reentrant=use_reentrant, early_stop=False)
    loss = (out.astype("float32") ** 2).sum()
    before_amp = amp_state()
    snapshot = rng_snapshot()
    with pytest.raises(Boom) as info:  # as itself, not Paddle's OSError
        loss.backward()
    assert model.calls == 2
    assert "boom on call 2" in str(info.value)
    assert amp_state() == before_amp
    # The rerun replayed the forward's random states and drew from them; every generator
    # is back where it was before backward.
    after = rng_draws()
    paddle.set_rng_state(snapshot[0])
    np.random.set_state(snapshot[1])
    random.setstate(snapshot[2])
    assert_same_draws(after, rng_draws())
    assert_clean()
    next_step_matches_no_recompute(use_reentrant)


def test_recomputation_exception_in_a_nested_non_reentrant_region():
    inner = Faulty(fail_on_call=3)  # forward, the outer's rerun: fine; the inner's own rerun fails

    def outer(x):
        return paddle.tanh(recompute(inner, paddle.tanh(x), use_reentrant=False, early_stop=False))

    out = recompute(outer, make_x(), use_reentrant=False, early_stop=False)
    with pytest.raises((Boom, OSError), match="boom on call 3"):
        out.sum().backward()
    assert inner.calls == 3
    assert_clean()
    next_step_matches_no_recompute(False)


@pytest.mark.parametrize("use_reentrant", [
    True,
    pytest.param(False, marks=pytest.mark.xfail(strict=True, reason=(
        "Paddle's UnPackHook switches grad mode off around the Python unpack hook and does "
        "not restore it when the hook raises; the hook cannot see the mode backward ran "
        "under, and _hooks._regrad assumes grad was on, so grad is left on inside the "
        "caller's no_grad block (until that block exits)"))),
], ids=["reentrant", "non_reentrant"])
def test_recomputation_exception_in_a_backward_run_under_no_grad(use_reentrant):
    """Backward started from code that switched grad off: grad stays off there afterwards."""
    model = Faulty(fail_on_call=2)
    out = recompute(model, make_x(), use_reentrant=use_reentrant, early_stop=False)
    loss = out.sum()
    with paddle.no_grad():
        with pytest.raises((Boom, OSError), match="boom on call 2"):
            loss.backward()
        assert not paddle.is_grad_enabled()
    assert_clean()


def test_backward_under_no_grad_works(use_reentrant):
    def step(use_recompute):
        paddle.seed(8)
        model = nn.Sequential(nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, 6))
        x = make_x()
        out = recompute(model, x, use_reentrant=use_reentrant) if use_recompute else model(x)
        loss = (out**2).sum()  # built with grad on: under no_grad it would need no gradient
        with paddle.no_grad():
            loss.backward()
            assert not paddle.is_grad_enabled()
        return [x.grad.numpy()] + [p.grad.numpy() for p in model.parameters()]

    for a, b in zip(step(True), step(False), strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_failed_backward_can_be_retried_with_a_fresh_forward(use_reentrant):
    model = Faulty(fail_on_call=2)
    x = make_x()
    out = recompute(model, x, use_reentrant=use_reentrant, early_stop=False)
    with pytest.raises((Boom, OSError)):
        out.sum().backward()
    model.clear_gradients()
    x.clear_gradient()
    model.fail_on_call = 0  # never again
    paddle.seed(3)
    out = recompute(model, x, use_reentrant=use_reentrant)
    out.sum().backward()
    got = [x.grad.numpy()] + [p.grad.numpy() for p in model.parameters()]
    model.clear_gradients()
    x.clear_gradient()
    paddle.seed(3)
    model(x).sum().backward()
    expected = [x.grad.numpy()] + [p.grad.numpy() for p in model.parameters()]
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_array_equal(a, b)
