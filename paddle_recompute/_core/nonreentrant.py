"""Non-reentrant recompute through saved-tensor hooks.

NOTE [ Non-reentrant frames ]: in forward, every tensor an operator saves for backward
inside the region is replaced by a small :class:`Handle` (index into the region's
:class:`Frame`), so the activation itself can be freed.  When backward unpacks a handle
whose value is not there, the frame reruns the function (replaying state, see
NOTE [ Replay ]) with a :class:`Recomputation` frame on the hook stack; the k-th tensor
saved there is the k-th tensor saved in forward.  Only tensors whose handles are still alive are kept.  An
unpacked value is handed over once; a second backward (``retain_graph=True``) recomputes
again.  Frames nest: the innermost region on the stack owns the tensors saved inside it.

The seam: ``Frame``, ``Recomputation`` and ``Handle`` are what the layers above build on
(the selective frame, ``no_recompute``, op records, the planner's measured frame).  A frame
is constructed whole (``Frame(function, args, kwargs, state=..., ...)``) and
:func:`run_non_reentrant` takes a ``make_frame`` with the same signature.  A subclass
overrides only these:

* ``Frame.observing()``: a context manager around the forward (None: nothing to observe).
* ``Frame.pack(tensor)``: what the forward saves in place of ``tensor`` (a ``Handle``, or a
  subclass that may carry a value).
* ``Frame.hold(tensors)``: tensors the region holds until backward anyway (the outputs of
  a ``no_recompute`` call); saved tensors that are these may be kept for free.
* ``Frame.finish(early_stop)``: after the forward; sets ``early_stop``.
* ``Frame.recomputation(needed)``: the ``Recomputation`` of one rerun.
* ``Frame.recompute()``: one rerun (wrap it to time it or to observe operators).
* ``Frame.let_go()``: no rerun can come; drop what only a rerun uses (NOTE [ Inputs only
  for a rerun ]), a subclass its own as well.
* ``Recomputation.pack(tensor)``: what a rerun does with the k-th saved tensor.

Fields subclasses use: ``leaves`` (the flattened inputs; after the forward, aliases of
them: NOTE [ Inputs as aliases ] in ``identity.py``), ``refs`` (weak references to the
handles, by index), ``leaf_flags`` (the saved leaves kept as themselves, with their
``stop_gradient`` at forward: NOTE [ Saved leaves ] in ``identity.py``), ``storage``
(rerun values by index), ``state`` (``ForwardState``), ``check``, ``kept``
(``no_recompute`` records), ``early_stop``, and ``meta``, ``trace``, ``last_pack_ns``,
which an overriding ``pack`` keeps up as ``Frame.pack`` does (with :data:`clock`); a
``Recomputation`` has ``frame``, ``needed``, ``last`` (the index it stops at), ``count``,
``stopper``, ``trace`` and ``kept_index``.

NOTE [ Inputs only for a rerun ]: a frame holds its inputs (``leaves``) for the rerun, and
the handles that Paddle's graph keeps hold the frame until the graph dies, which in a
training loop is when the next step's forward has returned its loss (``loss = model(x)``
replaces the last one).  So a frame lets go of what only a rerun uses as soon as no rerun
can come:

* after the forward, when no handle is alive (every saved tensor kept: a ``save_all``
  region, a region whose policy kept every slot, or one whose saved tensors all died in
  forward; ``let_go_if_no_rerun``).  PaddleFormers' Llama casts a layer's input
  before RMSNorm saves it, so the plain step frees each decoder layer's input (and the
  shared attention mask) after the forward, where a ``save_all`` region held them;
* after the backward, when every tensor the rerun gave back has been unpacked by a
  backward that frees its graph (Paddle refuses to unpack them again).  Before, a training
  loop held the last step's region inputs (the checkpoints themselves) through the next
  step's forward, on top of its own.

Either way ``let_go`` drops the inputs, the ``no_recompute`` outputs and, in a policy
region, the kept outputs and masks.

The reentrant PyLayer does the same after its backward (NOTE [ Reentrant inputs ]).

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
from .errors import RecomputeError, retains_graph
from .identity import Itself, detached, keeps_identity, rerun_aliases
from .offload import to_host, to_place
from .state import ForwardState
from .stop import Stoppable
from .versions import first_moved, rerun_input_error, versions

__all__ = ["run_non_reentrant", "EARLY_STOP_MIN_TAIL_NS", "Frame", "Recomputation", "Handle", "clock",
           "rerunning"]

_API = "recompute(use_reentrant=False)"
EARLY_STOP_MIN_TAIL_NS = 10_000  # about twice what a stop costs (measured: ~5 µs)
clock = time.perf_counter_ns


class Handle:
    """What the forward saves in place of a tensor: its index in the frame."""

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


def _no_rerun():
    return None  # stands in for the weak reference of a slot no rerun needs


class Frame:
    """Forward frame of one non-reentrant region; see NOTE [ Non-reentrant frames ].

    Args:
        function: the region's function, rerun in backward.
        args: its positional arguments.
        kwargs: its keyword arguments.
        state: the ``ForwardState`` captured before the forward (replayed by reruns).
        offload: ``(position, leaf index)`` pairs of inputs kept on the host until backward.
        check: compare what reruns save with the forward (count, shape, dtype, place).
        debug: record which layer and operator saved each tensor.
        recompute_context: a context manager entered around every rerun, or None.
    """

    __slots__ = (
        "function", "leaves", "spec", "host", "state", "refs", "meta", "storage",
        "early_stop", "check", "last_pack_ns", "end_ns", "trace", "recompute_context", "kept",
        "leaf_flags", "versions",
    )

    def __init__(self, function, args, kwargs, *, state, offload=(), check=True, debug=False,
                 recompute_context=None):
        self.function = function
        self.leaves, self.spec = tree.flatten_call(args, kwargs)
        self.host = {}
        for _, leaf in offload:
            self.leaves[leaf], self.host[leaf] = to_host(self.leaves[leaf])
        self.versions = versions(self.leaves)  # NOTE [ Rerun inputs ] in versions.py
        self.state = state
        self.refs = []
        self.meta = []
        self.storage = {}
        self.early_stop = False
        self.check = check
        self.last_pack_ns = 0
        self.end_ns = 0
        self.trace = [] if debug else None
        self.recompute_context = recompute_context
        self.kept = None
        self.leaf_flags = []

    def observing(self):
        """Context of the forward, or None (a policy frame observes operators)."""
        return None

    def finish(self, early_stop: bool) -> None:
        """After the forward: stop reruns early only where the region's tail is worth it."""
        self.early_stop = early_stop and self.end_ns - self.last_pack_ns > EARLY_STOP_MIN_TAIL_NS

    def let_go_if_no_rerun(self) -> bool:
        """After the forward: if no rerun can come (every handle is dead or carries its
        value), :meth:`let_go`; see NOTE [ Inputs only for a rerun ].  True when it did."""
        if any(ref() is not None for ref in self.refs):
            return False
        self.let_go()
        return True

    def keep_inputs(self) -> None:
        """After the forward, when a rerun can come: keep aliases of the inputs, not the
        caller's objects, which the caller may free (NOTE [ Inputs as aliases ] in
        ``identity.py``)."""
        self.leaves = rerun_aliases(self.leaves, self.host)

    def let_go(self) -> None:
        """No rerun can come: let go of what only a rerun uses, the inputs and the
        ``no_recompute`` outputs (NOTE [ Inputs only for a rerun ]).  An override point: a
        subclass lets go of its own as well."""
        self.leaves = None
        self.host = {}
        self.kept = None
        self.leaf_flags = []

    def hold(self, tensors) -> None:
        """``tensors`` are held until backward anyway (``no_recompute``'s outputs)."""

    def pack(self, tensor):
        if keeps_identity(tensor):  # NOTE [ Saved leaves ]: a parameter comes back as itself
            handle = Itself(tensor)
            self.refs.append(_no_rerun)
            self.leaf_flags.append((tensor, tensor.stop_gradient))
        else:
            handle = Handle(self, len(self.refs))
            self.refs.append(weakref.ref(handle))
        if self.check:
            self.meta.append(tensor_meta(tensor))
        if self.trace is not None:
            self.trace.append(op_label())
        self.last_pack_ns = clock()
        return handle

    def unpack(self, index: int):
        if index not in self.storage:
            self.recompute()
        try:
            value = self.storage.pop(index)
        except KeyError:
            raise RecomputeError(
                f"{_API}: saved tensor {index} was not produced by the recomputation "
                f"({len(self.refs)} were saved in forward)"
            ) from None
        if not self.storage and not retains_graph():
            self.let_go()  # every tensor the rerun gave was unpacked; Paddle refuses a second time
        return value

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

    def recomputation(self, needed: set) -> Recomputation:
        return Recomputation(self, needed)

    def recompute(self):
        """Rerun the function for the tensors whose handles are still alive; returns the
        :class:`Recomputation` that ran, or None when nothing was needed."""
        refs = self.refs
        needed = {i for i in range(len(refs)) if refs[i]() is not None}
        if not needed:
            return None
        if self.leaves is None:  # by NOTE [ Inputs only for a rerun ], this cannot happen
            raise RecomputeError(
                f"{_API}: a rerun was asked for after the region let go of its inputs "
                f"(saved tensors {sorted(needed)[:8]}); please report this with the model")
        moved = first_moved(self.leaves, self.versions)
        if moved >= 0:
            raise rerun_input_error(_API, self.function, self.spec, moved,
                                    self.leaves[moved]._inplace_version(), self.versions[moved])
        rec = self.recomputation(needed)
        args, kwargs = self._inputs()
        with self.state.replayed(_API), FlagsReplayed(self.leaf_flags):
            if self.recompute_context is None:
                _run_pushed(rec, rec.stopper.run, (self.function, args, kwargs), {})
            else:
                with self.recompute_context:
                    _run_pushed(rec, rec.stopper.run, (self.function, args, kwargs), {})
        if not rec.stopper.stopped and self.check:
            check_count(_API, "tensors saved for backward", len(refs), rec.count, rec.trace_text())
        return rec


class Recomputation:
    """Hook frame of one rerun: keeps the needed tensors, discards the rest."""

    __slots__ = ("frame", "needed", "last", "count", "stopper", "trace", "kept_index")

    def __init__(self, frame: Frame, needed: set):
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
            frame.storage[index] = detached(tensor)
        if index == self.last:
            self.stopper.stop()
        return _DISCARDED


class FlagsReplayed:
    """Context manager: the saved leaves have their forward's ``stop_gradient`` in the body.

    A layer frozen between a forward and its backward (LoRA-style fine-tuning) gets its
    gradient from this backward without recompute, as Paddle computes it; a rerun with the
    layer frozen would save fewer tensors than the forward did (NOTE [ Saved leaves ]).
    """

    __slots__ = ("flags", "changed")

    def __init__(self, flags: list):
        self.flags = flags
        self.changed = ()

    def __enter__(self) -> None:
        self.changed = [(t, flag) for t, flag in self.flags if t.stop_gradient != flag]
        for t, flag in self.changed:
            t.stop_gradient = flag

    def __exit__(self, *exc: object) -> None:
        for t, flag in self.changed:
            t.stop_gradient = not flag


def rerunning() -> bool:
    """Whether this thread is inside a region's rerun (a forward that happens again)."""
    return any(isinstance(f, Recomputation) for f in _hooks.active_frames())


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
        frame.end_ns = clock()
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

    ``make_frame`` builds the region's frame with :class:`Frame`'s signature (default:
    ``Frame``); the entry point passes the selective one for a ``policy`` (NOTE [ Selective
    recompute ] in ``_selective/frame.py``), so without a policy nothing of that machinery runs.
    """
    if not grad_enabled():
        return function(*args, **kwargs)
    forward_context, recompute_context = _contexts(context_fn)
    state = ForwardState(preserve_rng_state, state_roots, watch=True)
    frame = (Frame if make_frame is None else make_frame)(
        function, args, kwargs, state=state, offload=offload, check=check, debug=debug,
        recompute_context=recompute_context)
    observing = frame.observing()
    if forward_context is None and observing is None:  # the common case: no no-op contexts
        out = _forward(frame, function, args, kwargs)
    else:
        with forward_context or _NO_CONTEXT, observing or _NO_CONTEXT:
            out = _forward(frame, function, args, kwargs)
    state.forward_done()
    frame.finish(early_stop)
    if not frame.let_go_if_no_rerun():
        frame.keep_inputs()
    return out
