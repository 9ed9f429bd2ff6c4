"""Bad calls fail early with clear errors; a failing recomputation says what differed and
leaves random, autocast, grad-mode and hook state exactly as it was."""

import contextlib
import random
import re

import numpy as np
import paddle
import pytest
from _rc_helpers import amp_state, seed_all, tracer_autocast
from paddle import nn
from paddle.base import core

import paddle_recompute as pr
from paddle_recompute import RecomputeError, recompute, recompute_sequential
from paddle_recompute._core import hooks as _hooks
from paddle_recompute.testing import assert_tensors_equal


def leaf(*shape):
    t = paddle.randn(list(shape))
    t.stop_gradient = False
    return t


def block():
    return nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5), nn.Tanh())


# --------------------------------------------------------------------------- argument errors


@pytest.mark.parametrize("function", [None, 3, "layer", paddle.ones([1])], ids=type)
def test_function_must_be_callable(function):
    with pytest.raises(TypeError, match="`function` must be callable"):
        recompute(function, paddle.ones([2]))


@pytest.mark.parametrize(
    "option, value",
    [("preserve_rng_state", "yes"), ("use_reentrant", 1), ("early_stop", None), ("debug", "on")],
)
def test_boolean_options_must_be_bool(option, value):
    with pytest.raises(TypeError, match=f"`{option}` must be True or False"):
        recompute(block(), leaf(2, 3), **{option: value})


def test_determinism_check_value():
    with pytest.raises(ValueError, match="determinism_check"):
        recompute(block(), leaf(2, 3), determinism_check="strict")


def test_debug_needs_non_reentrant():
    with pytest.raises(ValueError, match="use_reentrant=False"):
        recompute(block(), leaf(2, 3), debug=True, use_reentrant=True)


def test_context_fn_checks():
    with pytest.raises(ValueError, match="use_reentrant=False"):
        recompute(block(), leaf(2, 3), context_fn=lambda: (contextlib.nullcontext(),) * 2)
    with pytest.raises(TypeError, match="context_fn"):
        recompute(block(), leaf(2, 3), context_fn=3, use_reentrant=False)


@pytest.mark.parametrize("segments", [0, -1, 4, 2.0, "2", True, None])
def test_sequential_segments_out_of_range(segments):
    model = nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 3))
    with pytest.raises(ValueError, match=r"segments.*from 1 to the number of functions \(3\)"):
        recompute_sequential({"segments": segments}, model, leaf(2, 3))


def test_sequential_unknown_ctx_key():
    model = nn.Sequential(nn.Linear(3, 3))
    with pytest.raises(ValueError, match=r"unknown ctx keys \['segmnets'\]"):
        recompute_sequential({"segmnets": 1}, model, leaf(2, 3))


def test_sequential_bad_ctx_and_functions():
    with pytest.raises(TypeError, match="ctx"):
        recompute_sequential(2, nn.Sequential(nn.Linear(3, 3)), leaf(2, 3))
    with pytest.raises(TypeError, match=r"positions \[1\] are not callable"):
        recompute_sequential({"segments": 1}, [nn.Tanh(), 3], leaf(2, 3))
    with pytest.raises(TypeError, match="functions"):
        recompute_sequential({"segments": 1}, nn.Tanh(), leaf(2, 3))


def test_register_rng_state_errors():
    with pytest.raises(TypeError, match="callables"):
        pr.register_rng_state("bad", 1, lambda s: None)
    with pr.register_rng_state("dup", lambda: 0, lambda s: None):
        with pytest.raises(ValueError, match="already registered"):
            pr.register_rng_state("dup", lambda: 0, lambda s: None)


def test_saved_tensors_hooks_need_callables():
    with pytest.raises(TypeError, match="callables"):
        with pr.saved_tensors_hooks(None, lambda t: t):
            pass


# --------------------------------------------------------------------------- state checks


class StateWitness:
    """Records RNG, autocast and grad state now; ``check()`` proves nothing changed since."""

    def __init__(self):
        self.rng = (paddle.get_rng_state(), np.random.get_state(), random.getstate())
        self.amp = amp_state()

    @staticmethod
    def _draws():
        return [paddle.rand([3]).numpy(), np.random.rand(3), random.random()]

    def check(self):
        __tracebackhide__ = True
        assert paddle.is_grad_enabled(), "grad mode left disabled"
        assert amp_state() == self.amp, "autocast state changed"
        assert _hooks.active_frames() == (), "a saved-tensor hook frame was left active"
        actual = self._draws()
        paddle.set_rng_state(self.rng[0])
        np.random.set_state(self.rng[1])
        random.setstate(self.rng[2])
        assert_tensors_equal(actual, self._draws(), err_msg="a random generator moved")
        with paddle.autograd.saved_tensors_hooks(lambda t: t, lambda t: t):  # ours are gone
            x = leaf(2, 3)
            (x * x).sum().backward()
        assert_tensors_equal(x.grad, 2 * x)
        assert_training_step_works()


def assert_training_step_works():
    """A full recompute training step, both modes, equals the plain step."""
    __tracebackhide__ = True
    results = []
    for mode in (None, True, False):
        seed_all(7)
        model = block()
        x = leaf(4, 3)
        out = model(x) if mode is None else recompute(model, x, use_reentrant=mode)
        out.sum().backward()
        results.append([x.grad] + [p.grad for p in model.parameters()])
    assert_tensors_equal(results[1], results[0])
    assert_tensors_equal(results[2], results[0])


@contextlib.contextmanager
def raises_in_backward(pattern: str, exc_name: str = "RecomputeError"):
    """The error raised inside backward, caught as its own type.

    Paddle's engine converts a Python exception raised inside backward to ``OSError``;
    the library raises the original instead (NOTE [ Errors in backward ]).
    """
    with pytest.raises(Exception) as info:
        yield info
    text = str(info.value)
    assert type(info.value).__name__ == exc_name, f"{type(info.value).__name__}: {text}"
    assert re.search(pattern, text), f"{pattern!r} not found in:\n{text}"


class ChangesOnRerun:
    """A function whose second call differs from its first (a global counter)."""

    def __init__(self, change):
        self.change = change
        self.calls = 0
        self.fc = nn.Linear(3, 3)

    def __call__(self, x):
        self.calls += 1
        h = nn.functional.dropout(self.fc(x), 0.5)
        if self.calls == 2:
            return self.change(h)
        return paddle.tanh(h) * 2


CHANGES = {
    "shape": lambda h: paddle.tanh(paddle.concat([h, h])) * 2,
    "dtype": lambda h: paddle.tanh(h.astype("float64")) * 2,
}


def _failing_backward(change, mode, **options):
    """Forward under autocast, a witness of the state, then the failing backward."""
    fn = ChangesOnRerun(change)
    with tracer_autocast():
        out = recompute(fn, leaf(2, 3), use_reentrant=mode, **options)
    witness = StateWitness()
    return out, witness


@pytest.mark.parametrize("kind", list(CHANGES))
def test_rerun_with_another_shape_or_dtype(kind, use_reentrant):
    out, witness = _failing_backward(CHANGES[kind], use_reentrant)
    what = "output tensor 0" if use_reentrant else r"saved tensor \d+"
    detail = (r"forward:\s+shape=\[2, 3\].*\n\s+recompute:\s+shape=\[4, 3\]" if kind == "shape"
              else r"forward:.*dtype=paddle.float32\n\s+recompute:.*dtype=paddle.float64")
    with raises_in_backward(rf"{what} differs between the original forward and the recomputation"
                            rf"\.\n\s+{detail}"):
        out.sum().backward()
    witness.check()


def test_reentrant_rerun_with_another_number_of_outputs():
    out, witness = _failing_backward(lambda h: (paddle.tanh(h) * 2, h), True)
    with raises_in_backward(r"different number of output tensors.*\n.*forward: 1\n.*recomputation: 2"):
        out.sum().backward()
    witness.check()


@pytest.mark.parametrize("extra", [True, False], ids=["more", "fewer"])
def test_non_reentrant_rerun_saving_another_number_of_tensors(extra):
    change = (lambda h: paddle.exp(paddle.tanh(h) * 2) * 1) if extra else (lambda h: h * 2)
    out, witness = _failing_backward(change, False, early_stop=False)
    with raises_in_backward(r"different number of tensors saved for backward"):
        out.sum().backward()
    witness.check()


def test_determinism_check_none_accepts_extra_work_at_the_end():
    """Extra saved tensors after the forward's last one are discarded when not checked."""
    seed_all()
    fn = ChangesOnRerun(lambda h: paddle.tanh(h) * 2 + paddle.exp(h).sum() * 0)
    x = leaf(2, 3)
    recompute(fn, x, use_reentrant=False, early_stop=False, determinism_check="none").sum().backward()
    seed_all()
    plain = ChangesOnRerun(None)
    y = leaf(2, 3)
    plain(y).sum().backward()
    assert_tensors_equal([x.grad, fn.fc.weight.grad], [y.grad, plain.fc.weight.grad])


def test_debug_trace_in_the_determinism_error():
    out, witness = _failing_backward(CHANGES["shape"], False, debug=True)
    with raises_in_backward(r"Saved-tensor trace.*first divergence"):
        out.sum().backward()
    witness.check()


# --------------------------------------------------------------------------- user errors


class Boom(Exception):
    pass


def test_error_in_the_forward_propagates_and_leaves_state_clean(use_reentrant):
    def f(x):
        paddle.rand([2])  # draw, then fail
        raise Boom("forward failed")

    with tracer_autocast():
        witness = StateWitness()
        with pytest.raises(Boom):
            recompute(f, leaf(2, 3), use_reentrant=use_reentrant)
    # the failed forward drew once, as the plain call would have: replay that draw
    paddle.set_rng_state(witness.rng[0])
    paddle.rand([2])
    witness.rng = (paddle.get_rng_state(), *witness.rng[1:])
    witness.amp = amp_state()
    witness.check()


def test_error_in_the_recomputation_propagates_and_leaves_state_clean(use_reentrant):
    def fail(h):
        raise Boom("recomputation failed")

    out, witness = _failing_backward(fail, use_reentrant)
    with raises_in_backward("recomputation failed", exc_name="Boom"):
        out.sum().backward()
    witness.check()


def test_hooks_in_paddles_slot_conflict_is_explained():
    """A pair registered in Paddle's core directly (not through the class, whose pairs
    compose: see test_nesting.py) cannot be adopted by a region."""
    core.eager.register_saved_tensors_hooks(lambda t: t, lambda t: t)
    try:
        with pytest.raises(RecomputeError, match=r"paddle_recompute.saved_tensors_hooks"):
            recompute(block(), leaf(2, 3), use_reentrant=False)
    finally:
        core.eager.reset_saved_tensors_hooks()
    StateWitness().check()


def test_our_saved_tensors_hooks_compose_with_regions():
    packed = []

    def pack(t):
        packed.append(tuple(t.shape))
        return t

    x = leaf(2, 3)
    model = block()
    with pr.saved_tensors_hooks(pack, lambda t: t):
        h = paddle.exp(x)
        out = recompute(model, h, use_reentrant=False)
    n_outside = len(packed)
    out.sum().backward()
    assert n_outside >= 1  # exp saved its output through the user's hook
    assert len(packed) == n_outside  # tensors of the region were recomputed, not packed
    StateWitness().check()


def test_reentrant_second_backward_is_refused_clearly():
    x = leaf(2, 3)
    out = recompute(block(), x, use_reentrant=True)
    out.sum().backward(retain_graph=True)
    witness = StateWitness()
    with raises_in_backward("cannot run backward twice"):
        out.sum().backward()
    witness.check()


@pytest.mark.parametrize("entry", ["Tensor.backward", "paddle.autograd.backward", "paddle.grad"])
def test_a_user_catches_recompute_error_raised_in_backward(use_reentrant, entry):
    """What a training script writes: ``except paddle_recompute.RecomputeError``."""
    import paddle_recompute

    calls = {"n": 0}
    fc = nn.Linear(3, 3)

    def changes(h):
        calls["n"] += 1
        return fc(h if calls["n"] == 1 else h[:1])

    x = leaf(2, 3)
    # x * 1: not a leaf, so the rerun must give it back (a leaf would stay itself)
    loss = paddle_recompute.recompute(changes, x * 1, use_reentrant=use_reentrant).sum()
    caught = None
    try:
        if entry == "Tensor.backward":
            loss.backward()
        elif entry == "paddle.autograd.backward":
            paddle.autograd.backward([loss])
        else:
            paddle.grad([loss], [x])
    except paddle_recompute.RecomputeError as exc:
        caught = exc
    assert caught is not None
    assert "differs between the original forward and the recomputation" in str(caught)
    assert "shape=[2, 3]" in str(caught) and "shape=[1, 3]" in str(caught)
    assert isinstance(caught.__cause__, OSError)  # Paddle's conversion, kept as the cause
    StateWitness().check()


def test_paddles_own_backward_errors_are_unchanged():
    x = leaf(2, 3)
    y = (x * 2).sum()
    y.backward()
    with pytest.raises(SystemError, match="retain_graph=True") as info:  # Paddle's own, as Paddle raises it
        y.backward()
    assert not isinstance(info.value, RecomputeError) and info.value.__cause__ is None
