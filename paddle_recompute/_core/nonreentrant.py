"""Non-reentrant recompute through saved-tensor hooks.

NOTE [ Non-reentrant frames ]: in forward, every tensor an operator saves for backward
inside the region is replaced by a small ``_Handle`` (index into the region's frame), so
the activation itself can be freed.  When backward unpacks a handle whose value is not
there, the frame reruns the function (replaying state, see NOTE [ Replay ]) with a
``_Recomputation`` frame on the hook stack; the k-th tensor saved there is the k-th tensor
saved in forward.  Only tensors whose handles are still alive are kept.  An unpacked value
is handed over once; a second backward (``retain_graph=True``) recomputes again.  Frames
nest: the innermost region on the stack owns the tensors saved inside it.

Early stop: the rerun ends as soon as the last needed tensor is back, see NOTE [ Early
stop ] in ``_core/stop.py``.  Stopping costs a few microseconds (a line tracer and an exception
through the rest of the region), so it is only used when the part of the region after its
last saved tensor took longer than ``EARLY_STOP_MIN_TAIL_NS`` in the forward.
"""

from __future__ import annotations

import contextlib
import time
import weakref

from . import hooks as _hooks
from . import tree
from .amp import grad_enabled
from .check import check_count, check_same, tensor_meta
from .debug import format_traces, op_label
from .errors import RecomputeError
from .offload import to_host, to_place
from .state import ForwardState
from .stop import Stoppable

__all__ = ["run_non_reentrant", "EARLY_STOP_MIN_TAIL_NS", "rerunning"]

_API = "recompute(use_reentrant=False)"
EARLY_STOP_MIN_TAIL_NS = 10_000  # about twice what a stop costs (measured: ~5 µs)
_clock = time.perf_counter_ns


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
_NO_CONTEXT = contextlib.nullcontext()


class _Frame:
    __slots__ = (
        "function", "leaves", "spec", "host", "state", "refs", "meta", "storage",
        "early_stop", "check", "last_pack_ns", "end_ns", "trace", "recompute_context", "kept",
    )

    def observing(self):
        """Context of the forward, or None (a policy frame observes operators)."""
        return None

    def finish(self, early_stop: bool) -> None:
        """After the forward: stop reruns early only where the region's tail is worth it."""
        self.early_stop = early_stop and self.end_ns - self.last_pack_ns > EARLY_STOP_MIN_TAIL_NS

    def pack(self, tensor):
        handle = _Handle(self, len(self.refs))
        self.refs.append(weakref.ref(handle))
        if self.check:
            self.meta.append(tensor_meta(tensor))
        if self.trace is not None:
            self.trace.append(op_label())
        self.last_pack_ns = _clock()
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
        host = self.host
        out = []
        for i, t in enumerate(self.leaves):
            if host and i in host:
                t = to_place(t, host[i])
            d = t.detach()
            if not t.stop_gradient:
                d.stop_gradient = False
            out.append(d)
        return tree.unflatten_call(self.spec, out)

    def recomputation(self, needed: set) -> _Recomputation:
        return _Recomputation(self, needed)

    def _recompute(self) -> None:
        refs = self.refs
        needed = {i for i in range(len(refs)) if refs[i]() is not None}
        if not needed:
            return
        rec = self.recomputation(needed)
        args, kwargs = self._inputs()
        with self.state.replayed():
            if self.recompute_context is None:
                _run_pushed(rec, rec.stopper.run, (self.function, args, kwargs), {})
            else:
                with self.recompute_context:
                    _run_pushed(rec, rec.stopper.run, (self.function, args, kwargs), {})
        if not rec.stopper.stopped and self.check:
            check_count(_API, "tensors saved for backward", len(refs), rec.count, rec.trace_text())


class _Recomputation:
    """Hook frame of one rerun: keeps the needed tensors, discards the rest."""

    __slots__ = ("frame", "needed", "last", "count", "stopper", "trace", "kept_index")

    def __init__(self, frame: _Frame, needed: set):
        self.frame = frame
        self.needed = needed
        self.kept_index = 0
        self.last = max(needed) if frame.early_stop else -1
        self.count = 0
        self.stopper = Stoppable()
        self.trace = [] if frame.trace is not None else None

    def trace_text(self, upto: int | None = None) -> str:
        if self.trace is None:
            return ""
        forward = self.frame.trace
        if upto is None:
            upto = max(len(forward), len(self.trace))
        return format_traces(forward, self.trace, upto)

    def pack(self, tensor):
        if self.stopper.stopped:
            return _DISCARDED
        frame = self.frame
        index = self.count
        self.count += 1
        if self.trace is not None:
            self.trace.append(op_label())
        if index >= len(frame.refs):
            if frame.check:
                check_count(_API, "tensors saved for backward", len(frame.refs), self.count,
                            self.trace_text(index))
            return _DISCARDED
        if frame.check:
            meta = tensor_meta(tensor)
            if meta != frame.meta[index]:
                check_same(_API, "saved tensor", index, frame.meta[index], meta, self.trace_text(index))
        if index in self.needed:
            frame.storage[index] = tensor.detach()
        if index == self.last:
            self.stopper.stop()
        return _DISCARDED


def rerunning() -> bool:
    """Whether this thread is inside a region's rerun (a forward that happens again)."""
    return any(isinstance(f, _Recomputation) for f in _hooks.active_frames())


def _run_pushed(frame, function, args, kwargs):
    """``function(*args, **kwargs)`` with ``frame`` as this thread's innermost packer."""
    _hooks.push(frame)
    try:
        return function(*args, **kwargs)
    finally:
        _hooks.pop(frame)


def _forward(frame, function, args, kwargs):
    """The region's forward; notes when the function itself ended (the tail that early stop
    can save is from the last saved tensor to there, not to the end of our bookkeeping)."""
    _hooks.push(frame)
    try:
        out = function(*args, **kwargs)
        frame.end_ns = _clock()
    finally:
        _hooks.pop(frame)
    return out


def _contexts(context_fn):
    if context_fn is None:
        return None, None
    contexts = context_fn()
    if not (isinstance(contexts, tuple) and len(contexts) == 2):
        raise TypeError(
            f"{_API}: context_fn must return a tuple of two context managers "
            f"(forward, recompute), got {type(contexts).__name__}"
        )
    return contexts


def run_non_reentrant(
    function, args, kwargs, *, state_roots, preserve_rng_state, offload, check, early_stop, debug,
    context_fn=None, make_frame=None,
):
    """Run ``function(*args, **kwargs)`` as a non-reentrant recompute region.

    ``make_frame`` builds the region's frame (default: a plain :class:`_Frame`); the entry
    point passes the selective one for a ``policy`` (NOTE [ Selective recompute ] in
    ``_selective/frame.py``), so without a policy nothing of that machinery runs.
    """
    if not grad_enabled():
        return function(*args, **kwargs)
    frame = _Frame() if make_frame is None else make_frame()
    frame.function = function
    frame.leaves, frame.spec = tree.flatten_call(args, kwargs)
    frame.host = {}
    for _, leaf in offload:
        frame.leaves[leaf], frame.host[leaf] = to_host(frame.leaves[leaf])
    frame.refs = []
    frame.meta = []
    frame.storage = {}
    frame.check = check
    frame.last_pack_ns = 0
    frame.trace = [] if debug else None
    frame.kept = None
    forward_context, frame.recompute_context = _contexts(context_fn)
    frame.state = ForwardState(preserve_rng_state, state_roots)
    observing = frame.observing()
    if forward_context is None and observing is None:  # the common case: no no-op contexts
        out = _forward(frame, function, args, kwargs)
    else:
        with forward_context or _NO_CONTEXT, observing or _NO_CONTEXT:
            out = _forward(frame, function, args, kwargs)
    frame.state.forward_done()
    frame.finish(early_stop)
    return out
