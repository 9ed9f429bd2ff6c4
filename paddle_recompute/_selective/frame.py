"""Selective recompute: a policy keeps chosen operator outputs; recomputation skips their ops.

NOTE [ Selective recompute ]: a policy region is a non-reentrant frame (NOTE [ Non-reentrant
frames ]) that also observes operators (``_core/ops.py``).  In forward, every operator call is
numbered and recorded: its name, the saved-tensor indices it packed (pack hooks fire inside
the C++ operator), and for each packed slot whether it is one of the call's inputs or
outputs.  The policy is asked about each output; kept outputs are held (detached) by the
frame.  A saved tensor is kept (handed back from its handle, never recomputed) when its
buffer is a kept output, a region input or a parameter; slots packed inside an operator are
decided when the operator returns.  Kept outputs are held for the life of the frame, so
their buffer addresses cannot be reused and matching saved tensors by address is exact.

The recomputation reruns the function with the same numbering.  Operator ``k`` is skipped
when all its outputs were kept, its kept outputs were not modified in place since, and
every slot it packed is kept or one of its inputs.  Skipping returns the kept outputs,
advances the saved-tensor index by the operator's forward pack count and fills the needed
slots from the rerun's inputs, exactly as the operator's own pack calls would have.
An operator that draws random numbers (``_ops.draws_random``) is skipped only if the region
preserves RNG state: the forward snapshots Paddle's generators right after it and the skip
sets them to that snapshot, so later random operators draw as in forward (the rerun reached
the operator with the forward's pre-operator state, by NOTE [ Replay ]).  A dropout whose
mask alone was kept is not run either: its output is rebuilt from the mask and the rerun's
input (NOTE [ Dropout mask replay ] in ``dropout_replay.py``), with the same snapshot.
Operators that cannot be skipped run.

NOTE [ Unreachable outputs ]: a rerun stops at the last saved tensor it needs (NOTE [ Early
stop ]); the operator that packed it need not even run when every slot it packed up to
that one is one of its inputs or kept (``fc2`` of an MLP whose dropout mask is kept: its
saved input is all backward wants of it).  So when its forward ends, a policy region finds
the last slot a rerun can need (handles still alive) and frees the kept outputs and masks
of the operators after it, and of that operator when it stops before running: a policy
that keeps every matmul output does not pay for the last projection's.  The region then
always stops early, which the release relies on.
"""

from __future__ import annotations

import threading
import weakref

import paddle

from .._core import ops as _ops
from .._core import tree
from .._core.check import tensor_meta as _meta
from .._core.debug import op_label as _label
from .._core.errors import RecomputeError
from .._core.nonreentrant import _clock, _Frame, _Recomputation
from .._core.offload import to_host
from .._core.rng import RngState
from .._core.stop import StopRecompute
from . import dropout_replay
from .oprecord import KEPT, Inputs, KeepHandle, OpRecord, dead, position
from .policies import Offload, PolicyInfo

__all__ = ["PolicyFrame", "FINISHED"]

class _Collectors(threading.local):
    """Per thread (NOTE [ Threads ] in ``_core/hooks.py``): lists that this thread's policy
    frames append themselves to when their forward ends."""

    def __init__(self):
        self.lists: list[list] = []

    def append(self, collector: list) -> None:
        self.lists.append(collector)

    def remove(self, collector: list) -> None:
        self.lists.remove(collector)

    def __bool__(self) -> bool:
        return bool(self.lists)

    def __getitem__(self, index: int) -> list:
        return self.lists[index]


#: While not empty, policy frames append themselves to the last list when their forward
#: ends (the planner measures its policy options this way, ``_planner/policy_options.py``);
#: another thread's regions are not collected.
FINISHED = _Collectors()


class PolicyFrame(_Frame):
    """Forward frame of a selective region; see NOTE [ Selective recompute ]."""

    __slots__ = ("policy", "ops", "current", "kept_ptrs", "offloaded", "tags", "slot_bytes",
                 "rerun_ns")

    def __init__(self, policy):
        self.policy = policy
        self.ops = []
        self.current = None
        self.kept_ptrs = {}
        self.offloaded = {}
        self.tags = set()
        self.slot_bytes = {}  # buffer start -> bytes, of saved tensors handles carry
        self.rerun_ns = 0  # time spent rerunning, for the planner's measured options

    def observing(self):
        for t in self.leaves:  # region inputs are held by the frame anyway
            self.kept_ptrs[t.data_ptr()] = t
        return _Observing(self)

    def check_names(self) -> None:
        """A name-based policy whose names were never tagged is a typo or a missing ``tag``."""
        names = getattr(self.policy, "names", None)
        if names and not names & self.tags:
            raise RecomputeError(
                f"recompute(policy=...): the policy keeps tensors named {sorted(names)}, but none "
                f"was tagged in this region (tagged: {sorted(self.tags) or 'nothing'}); call "
                f"paddle_recompute.tag(tensor, name) inside the recomputed function"
            )

    def recomputation(self, needed: set):
        return _PolicyRecomputation(self, needed)

    def finish(self, early_stop: bool) -> None:
        """After the forward: drop what no rerun can use (see NOTE [ Unreachable outputs ])."""
        super().finish(early_stop)
        if FINISHED:
            FINISHED[-1].append(self)
        self.kept_ptrs.clear()  # address matching is over; handles and records hold the values
        self.offloaded.clear()
        if early_stop and self._release_unreachable():
            self.early_stop = True  # the release relies on the rerun stopping there

    def _release_unreachable(self) -> bool:
        """Free the kept outputs (and masks) of the operators a rerun never reaches."""
        last = max((i for i, ref in enumerate(self.refs) if ref() is not None), default=-1)
        released = False
        for op in reversed(self.ops):
            if op.first <= last and not op.stops_before_running(last):
                break
            if any(h is not None for h in op.held) or op.mask is not None:
                op.held = [None] * len(op.held)
                op.mask = op.remake = None
                op.skippable = False
                released = True
        return released

    def _recompute(self) -> None:
        start = _clock()
        with _ops.installed():
            super()._recompute()
        self.rerun_ns += _clock() - start

    def held_bytes(self) -> int:
        """Device bytes this region holds for backward besides its inputs, parameters and
        buffers: the allocations behind kept saved tensors, kept outputs and masks, each
        once (a kept view holds its whole buffer; offloaded ones are on the host and not
        counted)."""
        sizes = dict(self.slot_bytes)
        for op in self.ops:
            for t, place in zip(op.held, op.places, strict=True):
                if t is not None and place is None:
                    _add_buffer(sizes, t)
            if op.mask is not None and op.mask[1] is None:
                _add_buffer(sizes, op.mask[0])
        for t in self._alive_anyway():
            if t._is_initialized():
                sizes.pop(_buffer(t)[0], None)
        return _covered(sizes)

    def _alive_anyway(self):
        """Inputs, parameters and buffers: kept views of them (``mask[:s, :s]``) cost nothing."""
        yield from self.leaves
        for layer in self.state.layers:
            yield from layer.parameters(include_sublayers=False)
            yield from layer.buffers(include_sublayers=False)

    def pack(self, tensor):
        index = len(self.refs)
        handle = KeepHandle(self, index)
        self.refs.append(weakref.ref(handle))
        if self.current is not None:
            self.current.pending.append((index, tensor, handle))  # decided when the op returns
        else:
            self._keep_slot(index, tensor, handle)
        if self.check:
            self.meta.append(_meta(tensor))
        if self.trace is not None:
            self.trace.append(_label())
        self.last_pack_ns = _clock()
        return handle

    def _keep_slot(self, index: int, tensor, handle) -> bool:
        """Let ``handle`` carry ``tensor`` if its buffer is kept anyway; True when it does."""
        ptr = tensor.data_ptr()
        if tensor.persistable or ptr in self.kept_ptrs:
            handle.value = tensor.detach()  # never the tensor itself: see NOTE [ No cycles ]
            if not tensor.persistable:
                self._count_slot(tensor)
        elif ptr in self.offloaded and self.offloaded[ptr][2]() is not None:
            # Only while the offloaded output's own object lives: then its buffer does,
            # and ``ptr`` cannot belong to another tensor.
            host, place = self.offloaded[ptr][:2]
            handle.value, handle.place = (host, place) if host.shape == tensor.shape else to_host(tensor)
        else:
            return False
        self.refs[index] = dead
        return True

    def _count_slot(self, tensor) -> None:
        _add_buffer(self.slot_bytes, tensor)

    def observe_op(self, name, fn, args, kwargs):
        if self.offloaded and name.endswith("_"):
            self._note_written(Inputs(args, kwargs))
        op = OpRecord(name, len(self.refs))
        self.ops.append(op)
        self.current = op
        try:
            out = fn(*args, **kwargs)
        except BaseException:
            # Not an operator call, for the numbering: ``x[i]`` raising IndexError ends the
            # iteration over a tensor (``for e in t``); the rerun does the same (see below).
            self.ops.pop()
            raise
        finally:
            self.current = None
        leaves, op.spec = tree.flatten(out)
        inputs = Inputs(args, kwargs)
        op.out_refs = [weakref.ref(t) for t in leaves]
        op.held = [None] * len(leaves)
        op.places = [None] * len(leaves)
        op.flags = [t.stop_gradient for t in leaves]
        op.versions = [t._inplace_version() for t in leaves]
        op.input_shapes = tuple(tuple(t.shape) for t in inputs())
        for i, t in enumerate(leaves):
            answer = self.policy(PolicyInfo(name, None, i, t, op.input_shapes, len(self.ops) - 1))
            if answer:
                self._hold(op, i, t, answer)
        if name == "dropout" and self.state.rng is not None and op.held[0] is None:
            self._keep_mask(op, (args, kwargs), out)
        if (self.state.rng is not None and _ops.draws_random(name)
                and (op.mask is not None or all(h is not None for h in op.held))):
            op.rng = RngState.capture_generators()
        self._decide_slots(op, leaves, inputs)
        return out

    def _note_written(self, inputs) -> None:
        """An in-place operator on an offloaded output: the host copy is stale for a rerun
        (``paddle.reshape_`` of a kept projection), so its operator must run there."""
        for t in inputs():
            entry = self.offloaded.get(t.data_ptr())
            if entry is not None and entry[3] is not None and entry[2]() is not None:
                entry[3].written = True

    def _hold(self, op: OpRecord, i: int, t, answer) -> None:
        if isinstance(answer, Offload):
            op.held[i], op.places[i] = host = to_host(t)
            self.offloaded[t.data_ptr()] = (*host, weakref.ref(t), op)
        else:
            op.held[i] = self.kept_ptrs[t.data_ptr()] = t.detach()

    def _keep_mask(self, op: OpRecord, call: tuple, out) -> None:
        """Ask about dropout's mask (its intermediate output 1); see NOTE [ Dropout mask replay ]."""
        mask = next((t for _, t, _ in op.pending if t.dtype == paddle.uint8), None)
        if mask is None:
            return
        answer = self.policy(PolicyInfo(op.name, None, 1, mask, op.input_shapes, len(self.ops) - 1))
        remake = dropout_replay.plan(*call, out) if answer else None
        if remake is None:  # not wanted, or no formula matches this kernel bit for bit
            return
        if isinstance(answer, Offload):
            op.mask = host = to_host(mask)
            self.offloaded[mask.data_ptr()] = (*host, weakref.ref(mask), None)
        else:
            op.mask = (mask.detach(), None)
            self.kept_ptrs[mask.data_ptr()] = op.mask[0]
        op.remake = remake

    def _decide_slots(self, op: OpRecord, leaves: list, inputs) -> None:
        all_kept = all(h is not None for h in op.held)
        slots = []
        for index, tensor, handle in op.pending:
            if self._keep_slot(index, tensor, handle):
                slots.append(KEPT)
                continue
            j = position(tensor, leaves)
            if j is not None:
                slots.append(-(j + 2))
                continue
            j = position(tensor, inputs())
            if j is None and all_kept:  # an internal result (layer_norm's mean): keep it too,
                handle.value = tensor.detach()  # so the operator can be skipped
                self._count_slot(tensor)
                self.refs[index] = dead
                j = KEPT
            slots.append(j)
        op.pending = None
        op.slots = slots
        op.update_skippable()

    def observe_tag(self, tensor, name: str) -> None:
        """Ask the policy again about ``tensor``, now with its ``name`` (see ``tag``)."""
        self.tags.add(name)
        for op in reversed(self.ops):
            for i, ref in enumerate(op.out_refs):
                if ref() is tensor:
                    answer = self.policy(PolicyInfo(op.name, name, i, tensor, op.input_shapes))
                    if answer and op.held[i] is None:
                        self._hold(op, i, tensor, answer)
                        self._upgrade_slots(op, i)
                    return
        answer = self.policy(PolicyInfo("unknown", name, 0, tensor, ()))
        if isinstance(answer, Offload):  # produced outside _C_ops: kept, its producer reruns
            self.offloaded[tensor.data_ptr()] = (*to_host(tensor), weakref.ref(tensor), None)
        elif answer:
            self.kept_ptrs[tensor.data_ptr()] = tensor.detach()

    def _upgrade_slots(self, op: OpRecord, i: int) -> None:
        """Slots ``op`` packed of its own output ``i``, now kept, carry it from now on."""
        for k, source in enumerate(op.slots):
            if source == -(i + 2):
                handle = self.refs[op.first + k]()
                if handle is not None:
                    handle.value, handle.place = op.held[i], op.places[i]
                self.refs[op.first + k] = dead
                op.slots[k] = KEPT
        op.update_skippable()


def _covered(sizes: dict) -> int:
    """Bytes covered by the spans ``[ptr, ptr + n)``: views inside one buffer count once."""
    total, end = 0, -1
    for start, n in sorted(sizes.items()):
        if start + n > end:
            total += start + n - max(start, end)
            end = start + n
    return total


def _buffer(t) -> tuple[int, int]:
    """(start, bytes) of the allocation behind ``t``: a view keeps all of it alive."""
    return t.data_ptr() - t._offset(), t._holder_size()


def _add_buffer(sizes: dict, t) -> None:
    if t._is_initialized():
        start, n = _buffer(t)
        sizes[start] = max(sizes.get(start, 0), n)


class _Observing:
    """Forward context of a policy frame: operators observed; names checked on success."""

    __slots__ = ("frame", "ops")

    def __init__(self, frame: PolicyFrame):
        self.frame = frame
        self.ops = _ops.installed()

    def __enter__(self) -> None:
        self.ops.__enter__()

    def __exit__(self, exc_type, *exc: object) -> None:
        self.ops.__exit__()
        if exc_type is None:
            self.frame.check_names()


class _PolicyRecomputation(_Recomputation):
    """Rerun of a policy region: skips the operators whose outputs were kept."""

    __slots__ = ("op_index", "skipped", "rebuilt")

    def __init__(self, frame: PolicyFrame, needed: set):
        super().__init__(frame, needed)
        self.op_index = 0
        self.skipped = 0
        self.rebuilt = 0  # dropout outputs rebuilt from their kept masks

    def observe_op(self, name, fn, args, kwargs):
        k = self.op_index
        self.op_index = k + 1
        try:
            return self._observe(k, name, fn, args, kwargs)
        except BaseException:
            self.op_index = k  # a call that raised was not numbered in forward either
            raise

    def _observe(self, k: int, name, fn, args, kwargs):
        ops = self.frame.ops
        op = ops[k] if k < len(ops) else None
        # A different operator or pack count: the rerun took another path; let the checks report it.
        if op is None or op.name != name or self.count != op.first:
            return fn(*args, **kwargs)
        if op.skippable and op.unchanged():
            self._fill_slots(op, args, kwargs)
            self.skipped += 1
            return op.replay()
        if op.stops_before_running(self.last):  # its slots up to the last needed are at hand
            self._fill_slots(op, args, kwargs)  # raises StopRecompute at the last one
        if op.rebuildable() and not kwargs:
            out = op.rebuild(args)
            if out is not None:  # else called otherwise than in forward: run it
                self._fill_slots(op, args, kwargs)
                self.rebuilt += 1
                return out
        return fn(*args, **kwargs)

    def _fill_slots(self, op, args: tuple, kwargs: dict) -> None:
        inputs = Inputs(args, kwargs)
        for source in op.slots:
            self._fill(source, inputs)

    def _fill(self, source: int, inputs) -> None:
        """What this slot's pack call would have done in a rerun of the operator.

        Runs in the operator wrapper, outside Paddle's hooks, so an early stop raises here.
        """
        if self.stopper.stopped:
            raise StopRecompute
        index = self.count
        self.count = index + 1
        if index in self.needed:  # never a kept slot: those are not needed
            self.frame.storage[index] = inputs()[source].detach()
        if index == self.last:
            self.stopper.stop_here()
