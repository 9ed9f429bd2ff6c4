"""Non-reentrant recompute through saved-tensor hooks.

NOTE [ Non-reentrant frames ]: in forward, every tensor an operator saves for backward
inside the region is replaced by a small ``_Handle`` (index into the region's frame), so
the activation itself can be freed.  When backward unpacks a handle whose value is not
there, the frame reruns the function (replaying state, see NOTE [ Replay ]) with a
``_Recomputation`` frame on the hook stack; the k-th tensor saved there is the k-th tensor
saved in forward.  Only tensors whose handles are still alive are kept, and with
``early_stop`` the rerun stops as soon as the last of them has been produced.  An unpacked
value is handed over once; a second backward (``retain_graph=True``) recomputes again.
Frames nest: the innermost region on the stack owns the tensors saved inside it.
"""

from __future__ import annotations

import weakref

from . import _hooks
from ._amp import grad_enabled
from ._check import check_count, check_same, tensor_meta
from ._errors import RecomputeError
from ._offload import to_host, to_place
from ._state import ForwardState

__all__ = ["run_non_reentrant"]

_API = "recompute(use_reentrant=False)"


class _Stop(Exception):
    """Raised from a pack hook to end a recomputation early."""


class _Handle:
    __slots__ = ("frame", "index", "__weakref__")

    def __init__(self, frame, index: int):
        self.frame = frame
        self.index = index

    def unpack(self):
        return self.frame.unpack(self.index)


class _Discarded:
    """What a recomputation hands to the (throw-away) graph it builds."""

    __slots__ = ()

    def unpack(self):
        raise RecomputeError(f"{_API}: a tensor saved during recomputation was unpacked")


_DISCARDED = _Discarded()


class _Frame:
    __slots__ = (
        "function", "args", "kwargs", "host", "state", "refs", "meta", "storage",
        "early_stop", "check",
    )

    def pack(self, tensor):
        handle = _Handle(self, len(self.refs))
        self.refs.append(weakref.ref(handle))
        if self.check:
            self.meta.append(tensor_meta(tensor))
        return handle

    def unpack(self, index: int):
        if index not in self.storage:
            self._recompute()
        try:
            return self.storage.pop(index)
        except KeyError:
            raise RecomputeError(
                f"{_API}: saved tensor {index} was not produced by the recomputation "
                f"({len(self.refs)} were saved in forward)"
            ) from None

    def _inputs(self):
        args, kwargs = self.args, self.kwargs
        if self.host:
            args = list(args)
            for i, place in self.host.items():
                args[i] = to_place(args[i], place)
        return _detach_tree(args), _detach_tree(kwargs)

    def _recompute(self) -> None:
        needed = {i for i, ref in enumerate(self.refs) if ref() is not None}
        if not needed:
            return
        rec = _Recomputation(self, needed)
        args, kwargs = self._inputs()
        with self.state.replayed(), _hooks.pushed(rec):
            try:
                self.function(*args, **kwargs)
            except Exception:
                if not rec.stopped:
                    raise
        if not rec.stopped and self.check:
            check_count(_API, "tensors saved for backward", len(self.refs), rec.count)


class _Recomputation:
    """Hook frame of one rerun: keeps the needed tensors, discards the rest."""

    __slots__ = ("frame", "needed", "last", "count", "stopped")

    def __init__(self, frame: _Frame, needed: set):
        self.frame = frame
        self.needed = needed
        self.last = max(needed) if frame.early_stop else -1
        self.count = 0
        self.stopped = False

    def pack(self, tensor):
        if self.stopped:
            raise _Stop
        frame = self.frame
        index = self.count
        self.count += 1
        if index >= len(frame.refs):
            if frame.check:
                check_count(_API, "tensors saved for backward", len(frame.refs), self.count)
            return _DISCARDED
        if frame.check:
            check_same(_API, "saved tensor", index, frame.meta[index], tensor_meta(tensor))
        if index in self.needed:
            frame.storage[index] = tensor.detach()
        if index == self.last:
            self.stopped = True
            raise _Stop
        return _DISCARDED


def _detach_tree(tree):
    from ._tree import map_tensors

    return map_tensors(_detach_like, tree)


def _detach_like(t):
    if t.stop_gradient:
        return t.detach()
    d = t.detach()
    d.stop_gradient = False
    return d


def run_non_reentrant(
    function, args, kwargs, *, state_roots, preserve_rng_state, offload, check, early_stop
):
    """Run ``function(*args, **kwargs)`` as a non-reentrant recompute region."""
    if not grad_enabled():
        return function(*args, **kwargs)
    frame = _Frame()
    frame.function = function
    frame.args = args
    frame.kwargs = kwargs
    frame.host = {}
    if offload:
        frame.args = list(args)
        for arg_index, _ in offload:
            frame.args[arg_index], frame.host[arg_index] = to_host(args[arg_index])
    frame.refs = []
    frame.meta = []
    frame.storage = {}
    frame.early_stop = early_stop
    frame.check = check
    frame.state = ForwardState(preserve_rng_state, state_roots)
    with _hooks.pushed(frame):
        return function(*args, **kwargs)
