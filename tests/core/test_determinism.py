"""The determinism check and ``debug=True`` traces.

A recomputation that takes another path than the forward is caught by comparing the
metadata (count, shape, dtype, place) of what it produces with the forward's: the saved
tensors in non-reentrant mode, the outputs in reentrant mode.  Errors raised inside
backward reach the caller as ``RecomputeError`` itself, although Paddle's engine converts
them to ``OSError`` on the way (NOTE [ Errors in backward ]).
"""

import re

import paddle
import pytest
from _rc_helpers import RunCount
from paddle import nn

from paddle_recompute import RecomputeError, recompute
from paddle_recompute._core import hooks as _hooks


class Branchy(nn.Layer):
    """A common prefix, then a branch that depends on how often it has run."""

    def __init__(self, same_shape: bool = False):
        super().__init__()
        self.lin = nn.Linear(5, 5)
        self.tanh = nn.Tanh()
        self.sigmoid = nn.Sigmoid()
        self.same_shape = same_shape

    calls = RunCount()  # forward runs, reruns included

    def prefix(self, x):
        return self.lin(x)

    def forward(self, x, y):
        self.calls += 1
        h = self.prefix(x)
        if self.calls == 1:
            return self.tanh(h)  # saves its output, [4, 5]
        if self.same_shape:
            return self.sigmoid(h)  # saves its output, [4, 5]
        return self.sigmoid(y)  # saves its output, [4, 3]


def inputs():
    x = paddle.randn([4, 5])
    x.stop_gradient = False
    y = paddle.randn([4, 3])
    y.stop_gradient = False
    return x, y


def count_saved(fn, *args) -> int:
    """How many tensors ``fn`` saves for backward (through a raw hook pair)."""
    packed = []
    with paddle.autograd.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        fn(*args)
    return len(packed)


ERRORS = RecomputeError  # caught as itself, not as Paddle's OSError


def backward_error(model, use_reentrant, **options) -> str:
    x, y = inputs()
    out = recompute(model, x, y, use_reentrant=use_reentrant, **options)
    with pytest.raises(ERRORS) as info:
        out.sum().backward()
    assert paddle.is_grad_enabled()
    assert not _hooks.active_frames()
    return str(info.value)


def test_non_reentrant_branch_change_names_the_saved_tensor_and_both_shapes():
    model = Branchy()
    index = count_saved(model.prefix, *inputs()[:1])  # the first tensor the branch saves
    message = backward_error(model, use_reentrant=False)
    assert f"saved tensor {index} differs" in message
    assert "forward:   shape=[4, 5], dtype=paddle.float32" in message
    assert "recompute: shape=[4, 3], dtype=paddle.float32" in message
    assert "determinism_check='none'" in message  # how to opt out is part of the message
    assert "Saved-tensor trace" not in message  # debug traces only on request


def test_reentrant_branch_change_names_the_output_and_both_shapes():
    message = backward_error(Branchy(), use_reentrant=True)
    assert "output tensor 0 differs" in message
    assert "shape=[4, 5]" in message and "shape=[4, 3]" in message


def test_debug_shows_both_traces_up_to_the_first_divergence():
    model = Branchy()
    index = count_saved(model.prefix, *inputs()[:1])
    message = backward_error(model, use_reentrant=False, debug=True)
    assert "first divergence" in message
    lines = message.splitlines()
    start = next(i for i, line in enumerate(lines) if "Saved-tensor trace" in line)
    trace = [line.strip() for line in lines[start + 1:start + 2 + index]]
    # The common prefix: the same Linear op on both sides.
    for i, line in enumerate(trace[:index]):
        assert re.fullmatch(rf"{i}: Linear > \w+ \| Linear > \w+", line), line
    # The divergence: the Tanh layer's op in forward, the Sigmoid layer's in recomputation.
    # (Paddle 3.3 routes paddle.tanh through a generated wrapper named ``_tanh``, the
    # innermost Paddle function on the stack, hence the optional underscore.)
    divergence = rf"{index}: Tanh > _?tanh \| Sigmoid > _?sigmoid\s+<-- first divergence"
    assert re.fullmatch(divergence, trace[index]), trace[index]


def test_debug_trace_on_a_count_mismatch():
    calls = []

    def f(x):
        calls.append(1)
        h = paddle.tanh(x)
        return paddle.exp(h) if len(calls) > 1 else h  # the rerun saves one more tensor

    x = paddle.randn([3, 3])
    x.stop_gradient = False
    out = recompute(f, x, use_reentrant=False, debug=True, early_stop=False)
    with pytest.raises(ERRORS) as info:
        (out * out).sum().backward()
    message = str(info.value)
    assert "a different number of tensors saved for backward" in message
    assert "during forward: 1" in message and "during recomputation: 2" in message
    assert re.search(r"1: <none> \| <function> > _?exp\s+<-- first divergence", message)


def test_determinism_check_none_does_not_raise_on_a_same_shape_divergence(use_reentrant):
    x, y = inputs()
    out = recompute(Branchy(same_shape=True), x, y, use_reentrant=use_reentrant,
                    determinism_check="none")
    out.sum().backward()  # a silently different recomputation; no error
    assert x.grad is not None


def test_default_check_is_metadata_only_and_passes_a_same_shape_divergence(use_reentrant):
    """Values are not compared (that would cost a copy of every saved tensor)."""
    x, y = inputs()
    out = recompute(Branchy(same_shape=True), x, y, use_reentrant=use_reentrant)
    out.sum().backward()


def test_determinism_check_none_lets_extra_saved_tensors_through():
    calls = []

    def f(x):
        calls.append(1)
        h = paddle.tanh(x)
        return paddle.exp(h) if len(calls) > 1 else h

    x = paddle.randn([3, 3])
    x.stop_gradient = False
    out = recompute(f, x, use_reentrant=False, determinism_check="none", early_stop=False)
    (out * out).sum().backward()  # the extra tensor is discarded; tanh's output is exact
    expected = paddle.grad((paddle.tanh(x) ** 2).sum(), x)[0]
    assert (x.grad.numpy() == expected.numpy()).all()


def test_debug_with_reentrant_mode_is_rejected():
    x = paddle.randn([2, 2])
    with pytest.raises(ValueError, match="use_reentrant=False"):
        recompute(paddle.tanh, x, use_reentrant=True, debug=True)


def test_a_region_works_again_after_a_determinism_error(use_reentrant):
    backward_error(Branchy(), use_reentrant=use_reentrant)
    lin = nn.Linear(3, 3)
    x = paddle.randn([2, 3])
    x.stop_gradient = False
    recompute(lin, x, use_reentrant=use_reentrant).sum().backward()
    got = x.grad.numpy()
    x.clear_gradient()
    lin(x).sum().backward()
    assert (got == x.grad.numpy()).all()
