"""Early stop never raises inside code the interpreter runs on its own (finalisers, callbacks).

NOTE [ Early stop ] in ``_core/stop.py``: once armed, the stop is raised by a global trace
function in the next Python function a stopping frame calls.  A weakref callback, a
``__del__``, a ``weakref.finalize`` or a generator being closed is "called" from whatever frame
happens to drop the last reference: an exception raised there cannot reach the recompute
region, Python reports it as unraisable (pytest: ``PytestUnraisableExceptionWarning``).
"""

import sys
import weakref

import numpy as np
import paddle
import pytest
from _rc_helpers import RunCount
from paddle import nn

from paddle_recompute import recompute
from paddle_recompute._core import nonreentrant as _nonreentrant


class Finalised:
    """An object whose ``__del__`` runs when the last reference goes."""

    def __init__(self, log):
        self.log = log

    def __del__(self):
        self.log.append("__del__")


def _suspended(log):
    try:
        yield 1
        yield 2
    finally:
        log.append("generator closed")


def _attach(kind: str, t, log, keep: list):
    """Ties something that runs from the interpreter to the death of tensor ``t``."""
    if kind == "weakref callback":
        keep.append(weakref.ref(t, lambda ref: log.append("weakref callback")))
    elif kind == "weakref.finalize":
        weakref.finalize(t, log.append, "finalize")
    elif kind == "__del__":
        t.finalised = Finalised(log)
    else:
        gen = _suspended(log)
        next(gen)
        t.generator = gen


LOG = []  # what the finalisers did (outside the layer: a rerun puts back what a forward writes on it)


class Tail(nn.Layer):
    """After the stop point: a stopped rerun does not run it."""

    calls = RunCount()

    def forward(self, x):
        self.calls += 1
        return paddle.scale(x, scale=2.0)  # scale saves nothing for backward


class Block(nn.Layer):
    """The linear's output dies right after ``tanh``, whose output is the last saved tensor:
    that is where the rerun stops, and where the finaliser then runs."""

    def __init__(self, kind):
        super().__init__()
        self.linear = nn.Linear(5, 5)
        self.tail = Tail()
        self.kind = kind
        self.keep = []

    calls = RunCount()  # forward runs, reruns included

    def forward(self, x):
        self.calls += 1
        box = [self.linear(x)]
        _attach(self.kind, box[0], LOG, self.keep)
        return self.tail(paddle.tanh(box.pop()))


KINDS = ["weakref callback", "weakref.finalize", "__del__", "generator close"]


@pytest.mark.parametrize("kind", KINDS)
def test_no_unraisable_exception_from_finalisers_at_the_stop(kind, monkeypatch):
    monkeypatch.setattr(_nonreentrant, "EARLY_STOP_MIN_TAIL_NS", -1)  # always stop early
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)

    def step(use_recompute):
        paddle.seed(5)
        block = Block(kind)
        x = paddle.randn([3, 5])
        x.stop_gradient = False
        out = recompute(block, x, use_reentrant=False) if use_recompute else block(x)
        (out**2).sum().backward()
        return block, [x.grad.numpy()] + [p.grad.numpy() for p in block.parameters()]

    _, expected = step(False)
    LOG.clear()
    block, grads = step(True)
    for g, e in zip(grads, expected, strict=True):
        np.testing.assert_array_equal(g, e)
    assert [(u.exc_type, u.object) for u in unraisable] == []
    assert block.calls == 2  # forward and the rerun
    assert block.tail.calls == 1  # the forward's: the rerun stopped after tanh (the tracer survived)
    assert len(LOG) == 2  # the finaliser ran after the forward and after the rerun's stop point
