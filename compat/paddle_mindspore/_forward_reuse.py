"""A grad-flagged Cell's recorded forwards, which a gradient transform over that Cell reuses.

NOTE [ Reusing a grad-flagged cell's forward ]: in PyNative mode, a Cell marked with
``set_grad()`` (``TrainOneStepCell`` marks its network so) records the graph of each forward.
When ``GradOperation``, ``ms.grad`` or ``value_and_grad`` is then called on that same Cell
with the very same input objects, MindSpore 2.10 differentiates the recorded forward instead
of running it again (its ``check_run``): the usual training cell ``loss = self.network(*inputs);
grads = self.grad(self.network, weights)(*inputs, sens)`` (mindcv's ``TrainStep``) runs the
network once per step, and BatchNorm updates its moving statistics once. Recorded (group
``reuse`` of ``compat/record/ms_cases_grad_hooks.py``): one forward call with ``set_grad`` and
the same inputs; two without ``set_grad``, or with equal inputs that are other objects; after
two forwards on the same inputs the transform uses the last; a second transform runs the
forward again.

Here a record is a call's inputs and output, made while gradients are recorded and outside a
transform's own forward. A Cell keeps one per set of inputs (MindSpore, recorded: after
forwards on ``x1`` then ``x2``, transforms on either reuse theirs), the last ``_KEPT`` of
them (a bound on the graphs kept alive by forwards no transform asks for); they go with the
Cell. Its floating inputs that record no gradient are passed to ``construct`` as copies that
do (the transform may ask for their gradients; nothing upstream of a no-gradient tensor is
affected). A transform takes the record (once: Paddle frees the graph in the backward) when
its function is that Cell and its inputs are the very same objects.

NOTE [ A record read after its weights moved ]: MindSpore keeps a record when weights or
inputs change between the forward and the transform (an optimizer step, ``set_data``,
``ops.assign``, ``load_param_into_net``, ``x[0] = ...``): it still runs no forward, returns
the recorded value, and differentiates the recorded graph, whose backward reads the saved
activations of that forward and the *current* values of the tensors it saved by reference
(recorded, ``stale_*`` in the ``reuse`` group: after ``set_data`` the weight gradient is the
old graph's, which does not read the weight, while the input gradient, which does, reads the
new weight; after an optimizer step BatchNorm's backward reads the new gamma). Paddle's saved
tensors raise ``PermissionDenied`` instead when one was written in place. So a recorded forward
saves its tensors through a frame of the saved-tensor hook stack that keeps each as a view
of its buffer (``Kept``), which Paddle reads without its in-place check: the backward then
reads what MindSpore's does. Recompute regions inside the forward own their saves as usual; a
frame already on the stack when the forward starts keeps its saves (the recipes' frame of
``Primitive.recompute`` keeps views as well; a region around the Cell recomputes them).
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import paddle

from paddle_recompute.extend import Kept, active_frames, pushed

__all__ = ["set_grad", "recorded_call", "take", "own_forward", "Run"]

_KEPT = 8  # records kept per Cell (MindSpore reused all 8 in the recorded case reuse/eight_records)


class _ThreadState(threading.local):
    def __init__(self) -> None:
        # id(cell) -> its recorded forwards, oldest first; the entry goes with the cell
        self.runs: dict[int, list[Run]] = {}
        self.own_forward = 0  # > 0 while a transform runs its function itself


_STATE = _ThreadState()


@dataclass(frozen=True)
class Run:
    """One recorded forward: the Cell (weakly), the caller's inputs, those ``construct`` got,
    and the output."""

    cell: weakref.ref
    given: tuple
    kwargs: dict
    passed: tuple
    out: Any


def set_grad(cell: Any, requires_grad: bool = True) -> Any:
    """``Cell.set_grad(requires_grad=True)``: mark the Cell to record its forwards; returns it."""
    cell.__dict__["requires_grad"] = bool(requires_grad)
    if not requires_grad and id(cell) in _STATE.runs:
        _STATE.runs[id(cell)] = []  # its records go too
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
    is recorded too (NOTE [ Reusing a grad-flagged cell's forward ])."""
    if not _recording(cell):
        return call(*args, **kwargs)
    passed = tuple(_differentiable(a) for a in args)
    # a frame already on the stack owns the saves: a recompute region's, or the recipes' (which
    # keeps views too, NOTE [ Recipes ] in _recipes.py)
    with contextlib.nullcontext() if active_frames() else pushed(_LiveSaves()):
        out = call(*passed, **kwargs)
    _keep(cell, Run(weakref.ref(cell), args, dict(kwargs), passed, out))
    return out


class _LiveSaves:
    """The frame of a recorded forward: saved tensors are read as they are when the backward
    runs (NOTE [ A record read after its weights moved ])."""

    __slots__ = ()

    def pack(self, tensor: paddle.Tensor) -> Kept:
        return Kept(tensor)


def _keep(cell: Any, run: Run) -> None:
    runs = _STATE.runs
    if id(cell) not in runs:  # once per Cell and thread: its records go when it does
        weakref.finalize(cell, runs.pop, id(cell), None)
    kept = [r for r in runs.get(id(cell), []) if not _matches(r, run.given, run.kwargs)]
    runs[id(cell)] = [*kept, run][-_KEPT:]


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if isinstance(a, paddle.Tensor) or isinstance(b, paddle.Tensor) or type(a) is not type(b):
        return False
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # values without a truth value (numpy arrays): not the same
        return False


def _matches(run: Run, args: tuple, kwargs: dict) -> bool:
    if len(run.given) != len(args) or run.kwargs.keys() != kwargs.keys():
        return False
    return (all(_same(a, b) for a, b in zip(run.given, args, strict=True))
            and all(_same(run.kwargs[k], v) for k, v in kwargs.items()))


def take(fn: Any, args: tuple, kwargs: dict) -> Run | None:
    """The record of ``fn``'s forward on exactly ``args`` and ``kwargs``, if any (removed: a
    record serves one transform, as Paddle frees its graph in the backward)."""
    runs = _STATE.runs.get(id(fn), [])
    for i, run in enumerate(runs):
        if run.cell() is fn and _matches(run, args, kwargs):
            del runs[i]
            return run
    return None


@contextlib.contextmanager
def own_forward() -> Iterator[None]:
    """A transform's own run of its function: Cells called inside record nothing."""
    _STATE.own_forward += 1
    try:
        yield
    finally:
        _STATE.own_forward -= 1
