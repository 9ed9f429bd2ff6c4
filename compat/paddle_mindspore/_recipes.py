"""Outputs recomputed in backward instead of stored: ``Primitive.recompute`` and ``output_recompute``.

NOTE [ Recipes ]: an operator's output is saved for backward by the operators that *consume*
it (and sometimes by the operator itself, e.g. ReLU saves its output).  So "recompute this
operator's output" cannot be done at the operator: it is done where tensors are saved.
While a MindSpore-style forward runs (a Cell call or a grad function, see :class:`scope`),
one frame sits on paddle-recompute's saved-tensor hook stack.  Every recompute-marked output
is registered (:func:`register_outputs`) under its buffer identity (data pointer, shape,
strides, dtype) with a *recipe*: the callable, its inputs (detached) and a replay snapshot
(RNG, autocast, frozen BatchNorm statistics).  When a consumer saves a tensor, the frame
looks it up: a registered output is replaced by a reference to its recipe, anything else is
kept as the core keeps a saved tensor (``extend.Kept``), which lets go of it once unpacked
unless the backward retains the graph: Paddle holds what a pack hook returns as long as the
grad node lives, to the end of backward, so a frame that held its saved tensors would keep
every activation of the step to the end (selective marks raised a step's peak 1.6x). A
recipe's tensor inputs are kept the same way, let go once its rerun has used them.  In
backward the recipe reruns the callable (without a graph) the first time one of its
references is unpacked and hands the value to every reference still pending, so the output
is computed once more per backward, however many consumers saved it.

A recipe input that is itself a registered output is held as that recipe, not as a tensor,
so chains of marked operators keep only the chain's first input.  In-place writes are
guarded like Paddle guards saved tensors: a registered output written in place is no longer
recognised (it is saved as is), and a recipe whose input was written in place refuses to
recompute (a :class:`~paddle_recompute.RecomputeError`; Paddle reports errors raised while
unpacking as ``OSError`` carrying that message) instead of returning a wrong value.

Registrations live while the outermost scope runs (and while the output tensor does); the
frame is pushed only when no other frame is on the stack, so inside recompute regions the
region owns every saved tensor, as the core requires.

Scopes and registrations are per thread, like the hook stack they sit on (NOTE [ Threads ]
in ``_core/hooks.py``): a scope in one thread neither tracks another thread's outputs nor
forgets them on exit.  Only the switch that turns recipes on is process-wide.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

import paddle

from paddle_recompute import RecomputeError, extend
from paddle_recompute.extend import grad_enabled

from ._replay import Snapshot

__all__ = ["Recipe", "enable", "tracking", "register_outputs", "lookup", "scope", "capture"]



class _Switch:
    __slots__ = ("enabled",)

    def __init__(self):
        self.enabled = False  # becomes True once anything asks for recipes; never reset


class _ThreadState(threading.local):
    """This thread's scope and registrations."""

    def __init__(self):
        self.active = False  # a scope of this thread has pushed the frame
        self.entries: dict[tuple, _Entry] = {}


_STATE = _Switch()
_LOCAL = _ThreadState()


def enable() -> None:
    """Turn recipes on (called when a primitive or a Cell asks for them)."""
    _STATE.enabled = True


def tracking() -> bool:
    """Whether outputs computed now can be registered (inside an active scope, with grad)."""
    return _LOCAL.active and grad_enabled()


class Recipe:
    """Something that can produce a tensor again; shared by every reference to it.

    ``pending`` counts references not yet unpacked; while it is positive the computed value
    is cached so that all consumers receive one recomputation. A backward through a retained
    graph unpacks every reference again: it starts the count anew (``references``), so that
    backward too computes the value once (its tensor inputs are let go after one use unless
    the graph is retained).
    """

    __slots__ = ("pending", "references", "cached", "__weakref__")

    def __init__(self):
        self.pending = 0
        self.references = 0
        self.cached = None

    def acquire(self) -> None:
        self.pending += 1
        self.references += 1

    def take(self) -> Any:
        if self.pending <= 0:  # every reference was unpacked: a further backward
            self.pending = self.references
        value = self.cached
        if value is None:
            value = self.compute()
        self.pending -= 1
        self.cached = value if self.pending > 0 else None
        return value

    def compute(self) -> Any:
        raise NotImplementedError


class Run(Recipe):
    """One rerun of ``function(*args, **kwargs)``; its value is the list of output tensors."""

    __slots__ = ("function", "sources", "spec", "snapshot", "versions")

    def __init__(self, function: Callable[..., Any], args: tuple, kwargs: dict, snapshot: Snapshot):
        super().__init__()
        self.function = function
        self.sources, self.spec, self.versions = capture(args, kwargs)
        self.snapshot = snapshot

    def compute(self) -> list:
        values = [s.take() if isinstance(s, Recipe) else s.unpack() for s in self.sources]
        self._check_versions(values)
        args, kwargs = extend.unflatten(self.spec, values)
        with self.snapshot.replayed():
            out = self.function(*args, **kwargs)
        return extend.flatten(out)[0]

    def _check_versions(self, values: list) -> None:
        for i, (source, version) in enumerate(zip(values, self.versions, strict=True)):
            if version is not None and source._inplace_version() != version:
                raise RecomputeError(
                    f"paddle_mindspore: input {i} of {_name(self.function)} was modified in place "
                    "after the forward, so its output cannot be recomputed in backward. Do not write "
                    "that input in place, or do not mark the operator/cell with recompute()."
                )


def _name(function: Callable[..., Any]) -> str:
    owner = getattr(function, "__self__", None)
    return type(owner).__name__ if owner is not None else getattr(function, "__name__", repr(function))


class Pick(Recipe):
    """Output tensor ``index`` of a :class:`Run`."""

    __slots__ = ("run", "index")

    def __init__(self, run: Run, index: int):
        super().__init__()
        self.run = run
        self.index = index
        run.acquire()

    def compute(self) -> paddle.Tensor:
        return self.run.take()[self.index]


def capture(args: tuple, kwargs: dict) -> tuple[list, Any, list]:
    """Inputs of a recipe: registered outputs become their recipes, tensors are kept as a
    saved tensor is (:class:`extend.Kept`: let go once a backward that does not retain the
    graph has used them); and each tensor's in-place version (None for a recipe)."""
    leaves, spec = extend.flatten((args, kwargs))
    sources: list = []
    versions: list = []
    for t in leaves:
        recipe = lookup(t)
        if recipe is None:
            sources.append(extend.Kept(t))
            versions.append(t._inplace_version())
        else:
            recipe.acquire()
            sources.append(recipe)
            versions.append(None)
    return sources, spec, versions


def _key(t: paddle.Tensor) -> tuple | None:
    try:
        ptr = t.data_ptr()
    except (RuntimeError, ValueError):
        return None
    if not ptr:
        return None
    return (ptr, tuple(t.shape), tuple(t.strides), t.dtype)


class _Entry:
    __slots__ = ("recipe", "ref", "version")


def _drop(entries: dict, ref: weakref.ref, key: tuple) -> None:
    """The registered tensor died (in whichever thread dropped it last): forget its entry
    in the registrations of the thread that made it."""
    entry = entries.get(key)
    if entry is not None and entry.ref is ref:
        del entries[key]


def register(t: paddle.Tensor, recipe: Recipe) -> None:
    """Let consumers of ``t`` save ``recipe`` instead of ``t`` (while ``t`` lives)."""
    key = _key(t)
    if key is None:
        return
    entry = _Entry()
    entry.recipe = recipe
    entry.version = t._inplace_version()
    entries = _LOCAL.entries
    entry.ref = weakref.ref(t, lambda ref, key=key: _drop(entries, ref, key))
    entries[key] = entry


def register_outputs(out: Any, function: Callable[..., Any], args: tuple, kwargs: dict,
                     snapshot: Snapshot) -> None:
    """Register every tensor in ``out`` as recomputable by rerunning ``function``."""
    leaves = extend.flatten(out)[0]
    if not leaves:
        return
    run = Run(function, args, kwargs, snapshot)
    for i, t in enumerate(leaves):
        register(t, Pick(run, i))


def lookup(t: paddle.Tensor) -> Recipe | None:
    """The recipe registered for ``t``'s buffer, if any."""
    entries = _LOCAL.entries
    if not entries:
        return None
    entry = entries.get(_key(t))
    if entry is None or entry.ref() is None or t._inplace_version() != entry.version:
        return None
    return entry.recipe


class _Reference:
    __slots__ = ("recipe",)

    def __init__(self, recipe: Recipe):
        self.recipe = recipe

    def unpack(self) -> paddle.Tensor:
        return self.recipe.take()


class _RecipeFrame:
    """Hook frame: saves a recipe reference for registered outputs, the tensor otherwise."""

    __slots__ = ()

    def pack(self, tensor: paddle.Tensor) -> extend.Kept | _Reference:
        recipe = lookup(tensor)
        if recipe is None:
            return extend.Kept(tensor)  # lets go once its node has run (NOTE [ Recipes ])
        recipe.acquire()
        return _Reference(recipe)


_FRAME = _RecipeFrame()


class scope:
    """Context of a MindSpore-style forward (Cell call, grad function).

    The outermost one pushes the recipe frame, if recipes are enabled, grad is on and no
    other frame is on the hook stack; on exit it forgets every registration.
    """

    __slots__ = ("pushed",)

    def __enter__(self) -> None:
        self.pushed = None
        local = _LOCAL
        if local.active or not _STATE.enabled or extend.active_frames() or not grad_enabled():
            return
        self.pushed = extend.pushed(_FRAME)
        self.pushed.__enter__()
        local.active = True

    def __exit__(self, *exc: object) -> None:
        if self.pushed is None:
            return
        _LOCAL.active = False
        _LOCAL.entries.clear()
        self.pushed.__exit__(*exc)
