"""A grad-flagged Cell's last forward, which a gradient transform over that Cell reuses.

NOTE [ Reusing a grad-flagged cell's forward ]: in PyNative mode, a Cell marked with
``set_grad()`` (``TrainOneStepCell`` marks its network so) records the graph of each forward.
When ``GradOperation``, ``ms.grad`` or ``value_and_grad`` is then called on that same Cell
with the very same input objects, MindSpore 2.10 differentiates the recorded forward instead
of running it again (its ``check_run``): the usual training cell ``loss = self.network(*inputs);
grads = self.grad(self.network, weights)(*inputs, sens)`` (mindcv's ``TrainStep``) runs the
network once per step, and BatchNorm updates its moving statistics once. Recorded
(``compat/record/ms_cases_reuse.py``): one forward call with ``set_grad`` and the same inputs;
two without ``set_grad``, or with equal inputs that are other objects; after two forwards the
transform uses the last.

Here the record is the Cell's last call's inputs and output, kept while gradients are recorded
and outside a transform's own forward. Its floating inputs that record no gradient are passed
to ``construct`` as copies that do (the transform may ask for their gradients; nothing
upstream of a no-gradient tensor is affected). A transform takes the record (once: Paddle
frees the graph in the backward) when its function is that Cell and its inputs are the same.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import paddle

__all__ = ["set_grad", "recorded_call", "take", "own_forward", "Run"]



class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.runs: dict[int, Run] = {}  # id(cell) -> its last recorded forward
        self.own_forward = 0  # > 0 while a transform runs its function itself


_STATE = _ThreadState()


@dataclass(frozen=True)
class Run:
    """One recorded forward: the caller's inputs, those ``construct`` got, and the output."""

    cell: Any
    given: tuple
    kwargs: dict
    passed: tuple
    out: Any


def set_grad(cell: Any, requires_grad: bool = True) -> Any:
    """``Cell.set_grad(requires_grad=True)``: mark the Cell to record its forwards; returns it."""
    cell.__dict__["requires_grad"] = bool(requires_grad)
    if not requires_grad:
        _STATE.runs.pop(id(cell), None)
    return cell


def _recording(cell: Any) -> bool:
    return bool(cell.__dict__.get("requires_grad")) and paddle.is_grad_enabled() and not _STATE.own_forward


def _differentiable(arg: Any) -> Any:
    if isinstance(arg, paddle.Tensor) and arg.stop_gradient and arg.is_floating_point():
        copy = arg.detach()
        copy.stop_gradient = False
        return copy
    return arg


def recorded_call(cell: Any, call: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """``call(*args, **kwargs)``; for a grad-flagged Cell while gradients are recorded, the call
    becomes its record (NOTE [ Reusing a grad-flagged cell's forward ])."""
    if not _recording(cell):
        return call(*args, **kwargs)
    passed = tuple(_differentiable(a) for a in args)
    out = call(*passed, **kwargs)
    _STATE.runs[id(cell)] = Run(cell, args, dict(kwargs), passed, out)
    return out


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if isinstance(a, paddle.Tensor) or isinstance(b, paddle.Tensor):
        return False
    return type(a) is type(b) and a == b


def take(fn: Any, args: tuple, kwargs: dict) -> Run | None:
    """The record of ``fn``'s last forward if ``args`` and ``kwargs`` are its inputs (removed)."""
    run = _STATE.runs.get(id(fn))
    if run is None or run.cell is not fn or len(run.given) != len(args) or run.kwargs.keys() != kwargs.keys():
        return None
    if not all(_same(a, b) for a, b in zip(run.given, args, strict=True)):
        return None
    if not all(_same(run.kwargs[k], v) for k, v in kwargs.items()):
        return None
    return _STATE.runs.pop(id(fn))


@contextlib.contextmanager
def own_forward() -> Iterator[None]:
    """A transform's own run of its function: Cells called inside record nothing."""
    _STATE.own_forward += 1
    try:
        yield
    finally:
        _STATE.own_forward -= 1
