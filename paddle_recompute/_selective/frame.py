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

Of the operators the rerun passes, those no needed saved tensor depends on are not run
either (NOTE [ Dead operators ] in ``liveness.py``); the forward records each operator's
input sources for that, and decides when it ends.

A region whose policy keeps everything lets go during the forward of the kept outputs no
rerun can need yet: NOTE [ Kept outputs let go ] in ``letgo.py``.
"""

from __future__ import annotations

import warnings
import weakref

import paddle

from .._core import ops as _ops
from .._core import tree
from .._core.check import tensor_meta as _meta
from .._core.debug import op_label as _label
from .._core.errors import RecomputeError
from .._core.identity import keeps_identity
from .._core.nonreentrant import Frame, clock
from .._core.offload import to_host
from .._core.rng import RngState
from . import dropout_replay
from .letgo import LetGo
from .liveness import Lineage, dead_ops
from .oprecord import INTERNAL, KEPT, FromInput, FromOutput, Inputs, KeepHandle, OpRecord, dead, position
from .policies import Offload, PolicyInfo, answer_of, keeps_everything, names_of
from .rerun import PolicyRecomputation

__all__ = ["PolicyFrame", "Offloaded", "ESCAPED_MESSAGE"]

ESCAPED_MESSAGE = (
    "recompute(policy=...): the region's code kept a tensor made by an operator its rerun left "
    "out (an attribute or a global set inside the region), so the rerun ran again with every "
    "operator to put the real value there (NOTE [ Escaped stand-ins ] in _selective/frame.py); "
    "to avoid the second rerun, keep such values outside the recomputed function")


class Offloaded:
    """A tensor the policy sent to the host, by its device address (``PolicyFrame.offloaded``).

    ``host``/``place``: the host copy and the place it goes back to; ``ref``: weak reference
    to the device tensor (while it lives, its buffer does, so the address is its own);
    ``op``: the operator record that produced it, or None (a tagged tensor, a dropout mask).
    """

    __slots__ = ("host", "place", "ref", "op")

    def __init__(self, copy: tuple, tensor, op: OpRecord | None):
        self.host, self.place = copy
        self.ref = weakref.ref(tensor)
        self.op = op

    def alive(self) -> bool:
        return self.ref() is not None


class PolicyFrame(Frame):
    """Forward frame of a selective region; see NOTE [ Selective recompute ].

    Takes the ``policy`` first, then :class:`~paddle_recompute._core.nonreentrant.Frame`'s
    arguments.  Beyond ``Frame``'s override points (NOTE [ Non-reentrant frames ]) it has
    one of its own: ``kept_slot(tensor)``, called for every saved tensor a handle carries
    (not a parameter), where the planner counts bytes.
    """

    __slots__ = ("policy", "ops", "current", "kept_ptrs", "offloaded", "tags", "lineage", "letgo",
                 "calls_of")

    def __init__(self, policy, function, args, kwargs, **fields):
        super().__init__(function, args, kwargs, **fields)
        self.policy = policy
        self.ops = []
        self.calls_of: dict[str, int] = {}  # operator name -> calls so far (PolicyInfo.occurrence)
        self.current = None
        self.kept_ptrs = {}
        self.letgo = LetGo(self.ops, self.refs, self.kept_ptrs, keeps_everything(policy))
        self.offloaded: dict[int, Offloaded] = {}
        self.tags = set()
        self.lineage = None

    def observing(self):
        for t in self.leaves:  # region inputs are held by the frame anyway
            self.kept_ptrs[t.data_ptr()] = t
        self.lineage = Lineage(self.leaves)
        return _Observing(self)

    def hold(self, tensors) -> None:
        for t in tensors:
            self.kept_ptrs[t.data_ptr()] = t

    def check_names(self) -> None:
        """A name-based policy whose names were never tagged is a typo or a missing ``tag``."""
        names = names_of(self.policy)
        if names and not names & self.tags:
            raise RecomputeError(
                f"recompute(policy=...): the policy keeps tensors named {sorted(names)}, but none "
                f"was tagged in this region (tagged: {sorted(self.tags) or 'nothing'}); call "
                f"paddle_recompute.tag(tensor, name) inside the recomputed function"
            )

    def recomputation(self, needed: set):
        return PolicyRecomputation(self, needed)

    def finish(self, early_stop: bool) -> None:
        """After the forward: drop what no rerun can use (see NOTE [ Unreachable outputs ])."""
        super().finish(early_stop)
        self.kept_ptrs.clear()  # address matching is over; handles and records hold the values
        self.offloaded.clear()
        if early_stop and self._release_unreachable():
            self.early_stop = True  # the release relies on the rerun stopping there
        self._mark_dead()

    def let_go(self) -> None:
        """No rerun can come (NOTE [ Inputs only for a rerun ]): the kept outputs and masks,
        which only a rerun's skips use, go too."""
        super().let_go()
        for op in self.ops:
            op.held = [None] * len(op.held)
            op.mask = op.remake = None
            op.skippable = False

    def _mark_dead(self) -> None:
        """Mark the operators a rerun need not run (NOTE [ Dead operators ])."""
        lineage, self.lineage = self.lineage, None
        if lineage is None or not self.ops:
            return
        refs = self.refs
        stop = len(self.ops)
        if self.early_stop:
            last = max((i for i, ref in enumerate(refs) if ref() is not None), default=-1)
            stop = sum(1 for op in self.ops if op.first <= last)
        for k in dead_ops(self.ops, lineage, lambda i: refs[i]() is not None, stop):
            self.ops[k].dead = True

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

    def recompute(self):
        with _ops.installed():
            rec = super().recompute()
            if rec is not None and rec.stand_ins_escaped():
                # NOTE [ Escaped stand-ins ]: the region's code kept a value of an operator
                # the rerun left out (an attribute or a global caching an intermediate), so
                # it now holds a stand-in; rerun once more running every operator, which
                # writes the real value there, as a rerun without the analysis would have.
                warnings.warn(ESCAPED_MESSAGE, UserWarning, stacklevel=2)
                for op in self.ops:
                    op.dead = False  # for this frame's later reruns too (retain_graph)
                rec = super().recompute()
        return rec

    def pack(self, tensor):
        index = len(self.refs)
        handle = KeepHandle(self, index)
        self.refs.append(weakref.ref(handle))
        if self.current is not None:
            self.current.pending.append((index, tensor, handle))  # decided when the op returns
        elif not self._keep_slot(index, tensor, handle) and self.lineage is not None:
            self.lineage.packed_outside(index, len(self.ops))
        if self.check:
            self.meta.append(_meta(tensor))
        if self.trace is not None:
            self.trace.append(_label())
        self.last_pack_ns = clock()
        return handle

    def _keep_slot(self, index: int, tensor, handle) -> bool:
        """Let ``handle`` carry ``tensor`` if its buffer is kept anyway; True when it does."""
        ptr = tensor.data_ptr()
        if keeps_identity(tensor) or ptr in self.kept_ptrs:
            if handle.keep(tensor) is tensor:  # the object itself: NOTE [ Saved leaves ]
                self.leaf_flags.append((tensor, tensor.stop_gradient))
            else:  # a detached view and its version: NOTE [ No cycles ]
                self.kept_slot(tensor)
                self.letgo.slot_kept(tensor)
        elif ptr in self.offloaded and self.offloaded[ptr].alive():
            # Only while the offloaded output's own object lives: then its buffer does,
            # and ``ptr`` cannot belong to another tensor.
            entry = self.offloaded[ptr]
            handle.value, handle.place = ((entry.host, entry.place) if entry.host.shape == tensor.shape
                                          else to_host(tensor))
        else:
            return False
        self.refs[index] = dead
        return True

    def kept_slot(self, tensor) -> None:
        """A saved tensor that a handle now carries (not a parameter); an override point."""

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
        op.occurrence = self.calls_of.get(name, 0)
        self.calls_of[name] = op.occurrence + 1
        for i, t in enumerate(leaves):
            info = PolicyInfo(name, None, i, t, op.input_shapes, len(self.ops) - 1,
                              op.occurrence)
            answer = answer_of(self.policy, info)
            if answer:
                self._hold(op, i, t, answer)
        if name == "dropout" and self.state.rng is not None and op.held[0] is None:
            self._keep_mask(op, (args, kwargs), out)
        if self.state.rng is not None and _ops.draws_random(name):
            op.rng = RngState.capture_generators()  # also lets the rerun leave it out
        if self.lineage is not None:
            self.lineage.operator(len(self.ops) - 1, name, inputs(), leaves, op.rng is not None)
        op.out_meta = [(t.shape, t.dtype, t.place) if t._is_initialized() else None for t in leaves]
        self._decide_slots(op, leaves, inputs)
        return out

    def observe_read(self, tensor) -> None:
        """Python read ``tensor``'s values in forward: what made it runs in a rerun."""
        if self.lineage is not None:
            self.lineage.read(tensor, len(self.ops))

    def _note_written(self, inputs) -> None:
        """An in-place operator on an offloaded output: the host copy is stale for a rerun
        (``paddle.reshape_`` of a kept projection), so its operator must run there."""
        for t in inputs():
            entry = self.offloaded.get(t.data_ptr())
            if entry is not None and entry.op is not None and entry.alive():
                entry.op.written = True

    def _hold(self, op: OpRecord, i: int, t, answer) -> None:
        if isinstance(answer, Offload):
            op.held[i], op.places[i] = copy = to_host(t)
            self.offloaded[t.data_ptr()] = Offloaded(copy, t, op)
        else:
            op.held[i] = self.kept_ptrs[t.data_ptr()] = t.detach()
            self.letgo.watch(op, i, t)

    def _keep_mask(self, op: OpRecord, call: tuple, out) -> None:
        """Ask about dropout's mask (its intermediate output 1); see NOTE [ Dropout mask replay ]."""
        mask = next((t for _, t, _ in op.pending if t.dtype == paddle.uint8), None)
        if mask is None:
            return
        info = PolicyInfo(op.name, None, 1, mask, op.input_shapes, len(self.ops) - 1,
                          op.occurrence)
        answer = answer_of(self.policy, info)
        remake = dropout_replay.plan(*call, out) if answer else None
        if remake is None:  # not wanted, or no formula matches this kernel bit for bit
            return
        if isinstance(answer, Offload):
            op.mask = copy = to_host(mask)
            self.offloaded[mask.data_ptr()] = Offloaded(copy, mask, None)
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
                slots.append(FromOutput(j))
                continue
            j = position(tensor, inputs())
            if j is not None:
                slots.append(FromInput(j))
            elif all_kept:  # an internal result (layer_norm's mean): keep it too,
                handle.keep(tensor)  # so the operator can be skipped
                self.kept_slot(tensor)
                self.refs[index] = dead
                slots.append(KEPT)
            else:
                slots.append(INTERNAL)
        op.pending = None
        op.slots = slots
        op.update_skippable()

    def observe_tag(self, tensor, name: str) -> None:
        """Ask the policy again about ``tensor``, now with its ``name`` (see ``tag``)."""
        self.tags.add(name)
        for op in reversed(self.ops):
            for i, ref in enumerate(op.out_refs):
                if ref() is tensor:
                    answer = answer_of(self.policy, PolicyInfo(op.name, name, i, tensor, op.input_shapes))
                    if answer and op.held[i] is None:
                        self._hold(op, i, tensor, answer)
                        self._upgrade_slots(op, i)
                    return
        answer = answer_of(self.policy, PolicyInfo("unknown", name, 0, tensor, ()))
        if isinstance(answer, Offload):  # produced outside _C_ops: kept, its producer reruns
            self.offloaded[tensor.data_ptr()] = Offloaded(to_host(tensor), tensor, None)
        elif answer:
            self.kept_ptrs[tensor.data_ptr()] = tensor.detach()

    def _upgrade_slots(self, op: OpRecord, i: int) -> None:
        """Slots ``op`` packed of its own output ``i``, now kept, carry it from now on."""
        for k, source in enumerate(op.slots):
            if isinstance(source, FromOutput) and source.position == i:
                handle = self.refs[op.first + k]()
                if handle is not None:
                    handle.value, handle.place = op.held[i], op.places[i]
                self.refs[op.first + k] = dead
                op.slots[k] = KEPT
        op.update_skippable()


class _Observing:
    """Forward context of a policy frame: operators observed; names checked on success."""

    __slots__ = ("frame", "ops")

    def __init__(self, frame: PolicyFrame):
        self.frame = frame
        self.ops = _ops.installed()

    def __enter__(self) -> None:
        self.ops.__enter__()

    def __exit__(self, exc_type, *exc: object) -> None:
        self.frame.letgo.stop()
        self.ops.__exit__()
        if exc_type is None:
            self.frame.check_names()
