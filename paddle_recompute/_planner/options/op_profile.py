"""Operator profiles of a model's blocks and of chosen single calls (units, NOTE [ Operator
units ] in ``options/units.py``), for the planner's operator-level option.

Each unit's forward (every call of a block, the one call of a call unit) is run with a
recording frame innermost on the hook stack and the operators observed (``_core/ops.py``),
numbered exactly as a policy region numbers them (NOTE [ Selective recompute ]).  Per
operator call it records the name, the seconds the kernel took (``time``) and the seconds
since the previous operator returned (``fixed``: the Python that leads to it, which a rerun
pays even where it skips the operator), the bytes of its tensor outputs, and per tensor
saved for backward which operator made it and which saved it (NOTE [ Operator model ] in
``solvers/ops.py``).  A saved tensor counts as made by: ``None`` when it is a unit input or a
parameter (held anyway); else the operator whose output it is (the tensor object, as a
policy region's rerun traces it), with the other operators whose outputs share its data
pointer as its aliases (a view of a kept output is covered by keeping the output, as the
frame matches kept buffers by address); else the operator that saved it (an internal
result, such as ``layer_norm``'s mean).  Per operator it also records which operators made
its inputs and whether it must run whenever a rerun passes it, as a policy region records
them (``_selective/liveness.py``'s ``Lineage``), so the graph is priced as the rerun runs,
leaving out dead operators (NOTE [ Ancestor model ]).

NOTE [ Kept bytes ]: an operator's ``nbytes`` is what a policy region holds when it keeps
that operator (``MeasuredFrame.held_bytes`` in ``options/policy_frame.py`` reads the same): the
allocations behind its outputs, each once (a kept view holds its whole buffer), and behind
the internal results it saves (the frame keeps those with the outputs so that the operator
can be skipped: dropout's mask, a quarter of its output), less the buffers of the region's
inputs, of parameters and of the unit's layer buffers (persistable or not), which are held
anyway (the causal mask ``unsqueeze``d inside a decoder layer, or a view of a layer's
rotary table, costs nothing to keep).  Counting the outputs' sizes alone put PaddleFormers'
Llama (hidden 512, seq 256) points off by up to 2 MiB a layer.  Not subtracted: a buffer two
kept operators share is counted for each (an over-count: the plan holds less).

A block whose calls run different operators (called twice per step on different inputs) gets
no graph, so no operator-level option.  Units whose calls run the same operators with the
same bytes and slots (the decoder layers of a model, the two calls of a layer listed twice)
share one graph, with each operator's median time over the calls and the repeats.  What a
policy region's forward costs beyond the unit's plain run (every operator passes through
Python to be numbered and shown to the policy) is measured: forwards of the call with every
unit in a region under ``policies.recompute_all`` alternate with plain forwards, and the
median difference is shared among the units by their operator counts.

NOTE [ Operator clock ]: operator times are read from the wall clock (reading the CPU time
is a system call, slow next to small kernels; NOTE [ Planning clock ] in ``harness.py``),
but everything they are weighed against (a call's or a run's rerun, a measured option, the
final measurement) is by the planner's clock, CPU time on the CPU.  On a loaded machine the
wall clock is mostly waiting for other processes, so a graph priced by it is overpriced
against the rest by the load, a different factor in each profile.  So each recorded call is
also timed whole by the planner's clock, and ``OpProfile.clock_scale`` (the planner's
seconds per wall second, summed over the graph's recorded calls; a run's, over its caller's
calls) converts an offered point's price (``op_options._point``).  Waiting is taken to be
spread over the call's operators in proportion to their wall time.  On an accelerator the
planner's clock is the wall clock and the scale is 1.  Where a point is measured (blocks and
call units: ``policy_options.measure_options``), the measurement replaces the price; runs'
points are priced, so the scale is what puts them on the planner's clock (the twice-listed
model of ``benchmarks/regions.py`` at load 6 on 2 cores: plans with its run's ``ops``
point predicted 2.8-6.5 ms across four profiles against 5.7-6.7 ms rerunning the run
whole, two of five plans reran it whole, which measured slower; the scale was 0.38-0.70).
"""

from __future__ import annotations

import functools
import statistics
import time
from dataclasses import dataclass

from paddle import nn

from ..._core import hooks as _hooks
from ..._core import ops as _ops
from ..._core import tree
from ..._core.amp import grad_enabled, set_grad_enabled
from ..._core.state import ForwardState
from ..._entry.routing import route_forwards
from ..._selective.liveness import UNKNOWN, Lineage
from ..._selective.oprecord import position
from ..._selective.policies import recompute_all
from ..harness import Session, clock, sync
from ..profile.result import register_op_profile_codec
from ..solvers.ops import Op, OpGraph, Slot
from .kinds import recompute_forward
from .policy_frame import add_buffer, buffer_of
from .units import unit_swaps

__all__ = ["OpProfile", "profile_ops", "signature", "op_profile_to_dict", "op_profile_from_dict"]

_clock = time.perf_counter


@dataclass(frozen=True)
class OpProfile:
    """A block's operator graph, the blocks that share it, its observed forward's extra
    seconds (``overhead_s``) and the kept bytes plans asked points for (``targets``: NOTE
    [ Budget points ] in ``options/ops.py``). Its seconds are the wall clock's, and
    ``clock_scale`` is the planner's clock's seconds per wall-clock second over the recording
    forwards (NOTE [ Operator clock ])."""

    graph: OpGraph
    blocks: tuple[str, ...]
    overhead_s: float
    targets: tuple[int, ...] = ()
    clock_scale: float = 1.0


class _Held:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def unpack(self):
        return self.value


class _Recorder:
    """Hook frame of one block call: records operators and saved tensors (see module doc)."""

    def __init__(self, leaves, buffers=()):
        self.free = {t.data_ptr() for t in leaves if t._is_initialized()}
        # held anyway: the call's inputs and its layer's buffers (NOTE [ Kept bytes ])
        self.free_buffers = {buffer_of(t)[0] for t in (*leaves, *buffers) if t._is_initialized()}
        self.names: list[str] = []
        self.times: list[float] = []
        self.fixed: list[float] = []
        self.nbytes: list[int] = []
        self.slots: list[tuple] = []
        self.made: dict[int, list] = {}  # data pointer -> the operators with an output there
        self.alive: list = []  # outputs held, so no data pointer is reused during the call
        self.pending: list | None = None
        self.lineage = Lineage(leaves)
        self.marks: dict = {}  # child call id -> (operators before it, operators by its end)
        self.clock_s = self.wall_s = 0.0  # the recorded call, by the planner's clock and the wall's
        self.last = _clock()

    def pack(self, tensor):
        if self.pending is not None:
            self.pending.append(tensor)
        else:  # saved outside an observed operator: the rerun must at least reach here
            at = max(len(self.names) - 1, 0)
            free = tensor.persistable or tensor.data_ptr() in self.free
            self.slots.append((None if free else at, at, ()))
            self.lineage.floor = max(self.lineage.floor, len(self.names))  # made who knows how
        return _Held(tensor.detach())

    def _slot(self, tensor, consumer: int, inputs: list, outputs: list) -> tuple:
        """(producer, consumer, aliases) of a tensor operator ``consumer`` saved (matched to its
        outputs, then its inputs, as the frame's slots are)."""
        ptr = tensor.data_ptr()
        if tensor.persistable or ptr in self.free:
            return (None, consumer, ())
        producer = consumer  # its output, or an internal result
        if position(tensor, outputs) is None and (p := position(tensor, inputs)) is not None:
            src = self.lineage.sources[consumer][p]
            if src == UNKNOWN:  # a rerun runs every operator before it
                self.lineage.floor = max(self.lineage.floor, consumer)
            producer = src if src >= 0 else consumer
        return (producer, consumer, tuple(a for a in self.made.get(ptr, ()) if a != producer))

    def observe_op(self, name, fn, args, kwargs):
        self.pending = []
        start = _clock()
        try:
            out = fn(*args, **kwargs)
        except BaseException:
            self.pending = None
            raise
        end = _clock()
        j = len(self.names)
        self.names.append(name)
        self.times.append(end - start)
        self.fixed.append(start - self.last)
        outputs = tree.flatten(out)[0]
        inputs = tree.tensors((args, kwargs))  # in the order oprecord.Inputs gives
        self.lineage.operator(j, name, inputs, outputs, True)
        leaves = [t for t in outputs if t._is_initialized()]
        internal = [t for t in self.pending
                    if position(t, outputs) is None and position(t, inputs) is None]
        self.nbytes.append(self._held_bytes(leaves + internal))
        for t in leaves:
            made = self.made.setdefault(t.data_ptr(), [])
            if j not in made:
                made.append(j)
        for t in self.pending:
            self.slots.append(self._slot(t, j, inputs, outputs))
        self.pending = None
        self.alive.append(out)
        self.last = _clock()
        return out

    def _held_bytes(self, tensors: list) -> int:
        """What keeping an operator holds (NOTE [ Kept bytes ]): the buffers behind its
        outputs and internal saved results, each once, less the region's inputs and
        parameters (alive anyway)."""
        sizes: dict = {}
        for t in tensors:
            if not t.persistable:
                add_buffer(sizes, t)
        return sum(n for start, n in sizes.items() if start not in self.free_buffers)

    def observe_read(self, tensor) -> None:
        self.lineage.read(tensor, len(self.names))

    def inputs(self, j: int) -> tuple[int, ...] | None:
        """The operators whose outputs operator ``j`` took (None: one of unknown origin)."""
        sources = self.lineage.sources[j]
        return None if UNKNOWN in sources else tuple(sorted({p for p in sources if p >= 0}))

    def forced(self, j: int) -> bool:
        return j in self.lineage.forced or j < self.lineage.floor

    def signature(self) -> tuple:
        return signature(self)


def signature(rec) -> tuple:
    """What two recordings must share to be one graph: a recorder's or a run's slice of one."""
    n = len(rec.names)
    return (tuple(rec.names), tuple(rec.nbytes), tuple(rec.slots),
            tuple(rec.inputs(j) for j in range(n)), tuple(rec.forced(j) for j in range(n)))


def _recording(name: str, calls: list, active: list | None = None):
    """A wrap recording each call into ``calls``; ``active`` (when given) holds the
    recording in progress (``options/op_runs.py`` marks child calls in it)."""
    def wrap(forward):
        def recorded(*args, **kwargs):
            rec = _Recorder(tree.tensors((args, kwargs)), _buffers_of(forward))
            sync()
            start, start_clock = _clock(), clock()
            if active is not None:
                active.append(rec)
            try:
                with _hooks.pushed(rec), _ops.installed():
                    rec.last = _clock()
                    out = forward(*args, **kwargs)
            finally:
                if active is not None:
                    active.pop()
            sync()
            rec.clock_s = clock() - start_clock
            rec.wall_s = _clock() - start
            calls.append((name, rec, rec.wall_s))
            rec.alive = []
            return out

        return recorded

    return wrap


def _buffers_of(forward) -> list:
    """The buffers of the layer whose bound ``forward`` this is, its sublayers' included
    (persistable or not: alive anyway, as ``policy_frame`` counts them)."""
    layer = getattr(forward, "__self__", None)
    return list(layer.buffers()) if isinstance(layer, nn.Layer) else []


def profile_ops(session: Session, repeats: int = 3, units=None) -> dict[str, OpProfile]:
    """Record the operators of every unit (NOTE [ Operator units ] in ``options/units.py``; by
    default the blocks of ``prof``) over ``repeats`` forwards of ``call`` (state put back
    after each); unit key -> its :class:`OpProfile`."""
    units = list(session.prof.blocks if units is None else units)
    calls: list = []
    grad = grad_enabled()
    try:
        set_grad_enabled(True)
        with route_forwards(unit_swaps(session.table, session.prof,
                                       {u: _recording(u, calls) for u in units})):
            for _ in range(repeats):
                _forward(session)
        observing = _observation_seconds(session, units, repeats)
    finally:
        set_grad_enabled(grad)
    groups: dict = {}
    for name, rec, _seconds in calls:
        groups.setdefault(rec.signature(), []).append((name, rec))
    per_op = observing / max(sum(len(r.names) for _, r, _ in calls) / repeats, 1)
    varying = _varying(groups)
    out: dict[str, OpProfile] = {}
    for members in groups.values():
        members = [(name, rec) for name, rec in members if name not in varying]
        if members:
            op_prof = _grouped(members, repeats, per_op)
            out.update(dict.fromkeys(op_prof.blocks, op_prof))
    return out


def _varying(groups: dict) -> set:
    """Blocks whose calls ran different operators (a position-keyed policy cannot fit them)."""
    seen: dict = {}
    for signature, members in groups.items():
        for name, _ in members:
            seen.setdefault(name, set()).add(signature)
    return {name for name, sigs in seen.items() if len(sigs) > 1}


def _forward(session: Session) -> float:
    """Seconds of one forward of the session's call by the operator clock (state put back)."""
    fn, args, kwargs = session.call
    with ForwardState(True, session.roots).replayed():
        sync()
        start = _clock()
        fn(*args, **kwargs)
        sync()
        return _clock() - start


def _observation_seconds(session: Session, units, repeats: int) -> float:
    """Median extra seconds of a forward whose units are observed policy regions."""
    observed = functools.partial(recompute_forward, policy=recompute_all)
    diffs = []
    for _ in range(repeats):
        plain = _forward(session)
        with route_forwards(unit_swaps(session.table, session.prof, dict.fromkeys(units, observed))):
            diffs.append(_forward(session) - plain)
    return max(statistics.median(diffs), 0.0)


def _grouped(members: list, repeats: int, per_op: float) -> OpProfile:
    first = members[0][1]
    recs = [rec for _, rec in members]
    ops = tuple(Op(name, statistics.median(r.times[j] for r in recs), first.nbytes[j],
                   skippable=not name.endswith("_"),
                   fixed=statistics.median(r.fixed[j] for r in recs),
                   inputs=first.inputs(j), forced=first.forced(j))
                for j, name in enumerate(first.names))
    graph = OpGraph(ops, tuple(Slot(p, c, a) for p, c, a in first.slots), ancestors=True)
    blocks = tuple(dict.fromkeys(name for name, _ in members))
    calls_per_block = len(members) / (len(blocks) * repeats)
    wall = sum(r.wall_s for r in recs)
    scale = sum(r.clock_s for r in recs) / wall if wall > 0 else 1.0
    return OpProfile(graph, blocks, per_op * len(ops) * calls_per_block, clock_scale=scale)


_OP_FIELDS = ("name", "time", "nbytes", "skippable", "offload_time", "fixed", "inputs", "forced")


def op_profile_to_dict(op_prof: OpProfile) -> dict:
    """``op_prof`` as plain data (a saved profile's ``op_graphs``: ``Profile.save``)."""
    g = op_prof.graph
    return {"ops": [[getattr(o, f) for f in _OP_FIELDS] for o in g.ops],
            "slots": [[s.producer, s.consumer, list(s.aliases)] for s in g.slots],
            "ancestors": g.ancestors, "blocks": list(op_prof.blocks),
            "overhead_s": op_prof.overhead_s, "targets": list(op_prof.targets),
            "clock_scale": op_prof.clock_scale}


def op_profile_from_dict(data: dict) -> OpProfile:
    """The inverse of :func:`op_profile_to_dict` (``Profile.load``)."""
    ops = tuple(Op(**{**dict(zip(_OP_FIELDS, row, strict=True)),
                      "inputs": None if row[6] is None else tuple(row[6])})
                for row in data["ops"])
    slots = tuple(Slot(p, c, tuple(a)) for p, c, a in data["slots"])
    return OpProfile(OpGraph(ops, slots, ancestors=bool(data["ancestors"])),
                     tuple(data["blocks"]), float(data["overhead_s"]),
                     targets=tuple(int(t) for t in data["targets"]),
                     clock_scale=float(data["clock_scale"]))


register_op_profile_codec(op_profile_to_dict, op_profile_from_dict)
