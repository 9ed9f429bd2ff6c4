"""The planner's operator-level option, kind ``"ops"``: per unit (a block, or one call of a
layer: NOTE [ Operator units ] in ``options/units.py``), points of its exact keep / recompute /
offload frontier over its measured operators.

``plan`` records every unit's operators once per profile (``options/op_profile.py``: measured time
of each, output bytes, which outputs backward needs, what a rerun must run to get each one
back; the first plan on a profile records them, later plans reuse them), solves each
distinct graph's frontier exactly (NOTE [ Operator model ] in
``solvers/ops.py``) and offers up to ``MAX_CANDIDATES`` of its points per unit, spread evenly
over the memory range, each as a region whose :class:`~paddle_recompute._selective.
op_policy.OpPolicy` keeps the chosen operators' outputs, keyed by operator name and
occurrence so that a block whose operators depend on the batch (a mixture of experts'
experts without tokens) applies it on every batch (NOTE [ Operator sequences that vary ]).

The model ranks the points; the options' costs are then measured like the policy options'
(``policy_options.measure_options``): interleaved rounds of one forward and backward per
point with it on every unit and one plain, reading each region's held device bytes and
rerun time (median over the rounds), plus what a region's forward takes beyond the unit's
plain forward (one figure per unit: NOTE [ Region forward ] there).  Operator times
recorded in forward and measured reruns differ (on PaddleFormers' Llama at hidden 512 on
CPU by up to 2x either way on a loaded machine), so ranking by the model and pricing by
measurement puts the options on the same footing as the policies beside them.  A point whose run fails
is left out where it failed, and a later plan on the profile does not run it again
(``measure_options`` records the failure); points not measured (runs of calls) keep the
model's cost.  An option's memory is the unit's inputs (a region holds them) plus
the held bytes.  Offloading is offered only off the CPU (on the CPU the host is the device,
so it frees nothing), priced by a measured host round trip.

NOTE [ Budget points ]: points spread over a decoder layer's frontier lie a layer's eighth
of its saved bytes apart, and a budget between two of them is spent on the lower one: on
PaddleFormers' Llama (hidden 512, seq 256) at budget 0.5 every layer took the point holding
22.5 MiB where its share of the budget was 26.5 MiB, and the plan held 0.42x.  So a plan
also offers each block the frontier's fastest point within the block's share of the budget:
the budget less the bytes saved outside the blocks and the blocks' inputs (those several
take, once: NOTE [ Shared block inputs ] in ``profile/measure.py``), over the number of blocks
(blocks alike get the same point; the solver still mixes it with the others).
The share is added to the graph's ``targets`` and the point is measured like the others,
once: a later plan on the profile (another budget) adds its own and measures only that.
The model's kept bytes equal what the region holds (NOTE [ Kept bytes ] in
``options/op_profile.py``), so the point fits the share as measured.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import time
import warnings

import paddle

from ..._selective.op_policy import OpPolicy
from ..harness import Session, sync
from ..solvers.ops import OpGraph, op_frontier
from .kinds import recompute_forward, register_option
from .op_profile import profile_ops
from .op_runs import profile_runs
from .policies import measure_options
from .units import op_runs, op_units

__all__ = ["KIND", "MAX_CANDIDATES", "measure_ops", "ops_wraps", "offered"]

KIND = "ops"
MAX_CANDIDATES = 8


def measure_ops(session: Session, kinds, calls: bool = False, budget: int | None = None) -> None:
    """Fill ``prof.op_profiles`` when ``"ops"`` is among ``kinds`` and it is not filled yet,
    and measure the offered points."""
    measure_options(session, ops_wraps(session, kinds, calls, budget))


def ops_wraps(session: Session, kinds, calls: bool = False, budget: int | None = None,
              alike: dict | None = None) -> dict:
    """Record the units' operators into ``prof.op_profiles`` (when ``"ops"`` is among
    ``kinds`` and they are not recorded yet) and return the offered points not measured yet
    as the options ``measure_options`` takes (label -> {unit: wrap}); ``{}`` when nothing is
    to measure.  The units are the blocks and, with ``calls`` (plans over the call tree), the
    calls and runs of calls NOTE [ Operator units ] picks; runs are priced by the model, not
    measured.  With ``budget`` (the plan's, in bytes), the blocks also get the point that
    fits their share of it (NOTE [ Budget points ]).  ``alike`` (``options/alike.py``'s
    groups): each group's first block is recorded alone and the group shares its graph
    (NOTE [ Blocks measured alone ])."""
    prof = session.prof
    if KIND not in kinds or not session.params:
        return {}
    if not prof.op_profiles:
        _record(session, calls, alike or {})
    if budget is not None:
        _target(prof, budget)
    options: dict = {}
    keep = "keep" in kinds or calls  # a plan over the call tree keeps any call it leaves
    for unit in op_units(prof, calls):
        for i in range(len(_points(prof.op_profiles[unit])) if unit in prof.op_profiles else 0):
            label = f"{KIND}:{i}"
            if label not in prof.policy_costs.get(unit, {}) and not (
                    keep and _beaten_by_keep(prof, unit, i)):
                options.setdefault(label, {})[unit] = functools.partial(
                    _wrap, policy=_point(prof, unit, i)[1])
    return options


def _record(session: Session, calls: bool, alike: dict) -> None:
    """Record the units' operators (and runs', with ``calls``) into ``prof.op_profiles``;
    of each group of ``alike`` blocks, the first alone, for all."""
    prof = session.prof
    units = list(op_units(prof, calls))
    runs = op_runs(prof) if calls else {}
    if not (units or runs):
        return
    grouped = {m for group in alike.values() for m in group.members}
    whole = [u for u in units if u not in grouped]
    found = _recorded(whole, "its units' operators",
                      lambda: profile_ops(session, units=whole))
    for first, group in alike.items():
        if first in units:
            alone = _recorded([first], "its units' operators",
                              lambda g=group, f=first: profile_ops(g.session, units=[f]))
            if first in alone:
                shared = dataclasses.replace(alone[first], blocks=group.members)
                found.update(dict.fromkeys(group.members, shared))
    recorded = {**found, **_recorded(runs, "the runs' operators",
                                     lambda: profile_runs(session, runs))}
    seconds_per_byte = _offload_seconds_per_byte()
    for block, op_prof in recorded.items():
        if seconds_per_byte is not None:
            op_prof = dataclasses.replace(op_prof, graph=_offloadable(op_prof.graph, seconds_per_byte))
        prof.op_profiles[block] = op_prof


def _target(prof, budget: int) -> None:
    """Add each block's share of ``budget`` to its graph's ``targets`` (NOTE [ Budget
    points ])."""
    blocks = [b for b in prof.blocks if b in prof.op_profiles]
    if not blocks:
        return
    inputs = (sum(prof.layers[b].input_bytes for b in prof.blocks)  # those several take, once
              - prof.shared_input_credit(prof.blocks))
    share = (budget - prof.outside_bytes - inputs) // len(prof.blocks)
    if share <= 0:
        return
    done: dict = {}
    for b in blocks:
        op_prof = prof.op_profiles[b]
        if id(op_prof) not in done:
            done[id(op_prof)] = (op_prof if share in op_prof.targets else
                                 dataclasses.replace(op_prof, targets=(*op_prof.targets, share)))
        prof.op_profiles[b] = done[id(op_prof)]


def _recorded(todo, what: str, record) -> dict:
    """``record()`` when there is something ``todo``; ``{}`` with a warning when it fails
    (the option is then left out where it needed that recording, and only there)."""
    if not todo:
        return {}
    try:
        return record()
    except Exception as exc:  # noqa: BLE001  (the option is dropped, and said so)
        warnings.warn(f"plan: option {KIND!r} left out where it needed {what}: recording "
                      f"failed ({type(exc).__name__}: {exc})", stacklevel=4)
        return {}


def _offloadable(graph: OpGraph, seconds_per_byte: float) -> OpGraph:
    ops = tuple(dataclasses.replace(o, offload_time=o.nbytes * seconds_per_byte) for o in graph.ops)
    return OpGraph(ops, graph.slots)


def _offload_seconds_per_byte() -> float | None:
    """Seconds per byte of a device -> host -> device round trip (None on the CPU)."""
    if paddle.get_device() == "cpu":
        return None
    x = paddle.empty([8 * 1024 * 1024], dtype="float32")
    place = x.place
    sync()
    start = time.perf_counter()
    x.cpu()._copy_to(place, True)
    sync()
    return (time.perf_counter() - start) / (x.size * 4)


@functools.lru_cache(maxsize=64)
def _frontier(graph: OpGraph):
    return op_frontier(graph)


def _spread(points: tuple, n: int) -> list:
    """At most ``n`` points: for evenly spaced memory levels, the fastest point within each."""
    lo, hi = points[0].memory, points[-1].memory
    picked: dict = {}
    for k in range(n):
        level = lo + (hi - lo) * k / max(n - 1, 1)
        best = max((p for p in points if p.memory <= level), key=lambda p: p.memory)
        picked[best.memory] = best
    return list(picked.values())


def _points(op_prof) -> list:
    """The offered points: ``MAX_CANDIDATES`` spread over the frontier, then the fastest
    within each of the graph's ``targets`` (in the order added, so a point's index, its
    label, stays what it was when it was measured)."""
    frontier = _frontier(op_prof.graph)
    points = _spread(frontier.points, MAX_CANDIDATES)
    for level in op_prof.targets:
        best = frontier.best(level)
        if best is not None and all((best.keep, best.offload) != (p.keep, p.offload) for p in points):
            points.append(best)
    return points


def _point(prof, unit: str, i: int):
    """(predicted (bytes, seconds), policy) of ``unit``'s ``i``-th offered point, or None."""
    op_prof = prof.op_profiles.get(unit)
    points = _points(op_prof) if op_prof is not None else []
    if i >= len(points):
        return None
    p = points[i]
    policy = OpPolicy(tuple(o.name for o in op_prof.graph.ops), p.keep, p.offload, unit,
                      by_occurrence=True)  # NOTE [ Operator sequences that vary ]
    return (p.memory, (op_prof.overhead_s + p.time) * op_prof.clock_scale), policy


def _unit_row(prof, unit: str):
    """The profile row whose bytes keeping ``unit`` holds: a block called once, or a call unit
    (None for a block called several times: its row sums its calls)."""
    if unit in prof.calls:
        return prof.calls[unit]
    row = prof.layers.get(unit)
    return row if row is not None and row.calls == 1 else None


def offered(prof, unit: str, i: int) -> bool:
    """Whether ``unit``'s ``i``-th point is offered to the solver: measured, or not beaten by
    keep (NOTE [ Points keep beats ])."""
    return f"{KIND}:{i}" in prof.policy_costs.get(unit, {}) or not _beaten_by_keep(prof, unit, i)


def _beaten_by_keep(prof, unit: str, i: int) -> bool:
    """Whether ``unit``'s ``i``-th point is predicted to hold at least what keeping the unit
    holds, on ``unit`` and on every unit sharing its recording (blocks alike: measured once,
    for all, so they agree).  Keep costs no extra time, so no plan can pick the point: it
    is neither offered nor measured (NOTE [ Points keep beats ])."""
    point = _point(prof, unit, i)
    if point is None:
        return False
    mine = prof.op_profiles[unit]
    for u in [u for u, p in prof.op_profiles.items() if p is mine] or [unit]:
        row = _unit_row(prof, u)
        if row is None or row.input_bytes + point[0][0] < row.saved_bytes:
            return False
    return True


# NOTE [ Points keep beats ]: the frontier's top point can hold more than keeping the block
# (its inputs beside every saved tensor: 40.3 against 39.0 MiB on a Llama decoder layer,
# hidden 512), so no plan picks it, yet measuring it cost a step per round.  A point whose
# predicted bytes reach keep's is not measured when keep is offered (``keep`` among the
# kinds, or a plan over the call tree, which keeps every call it leaves), and ``_provider``
# does not list such a point unless it was measured (a plan without ``keep``; the tree
# solver drops it anyway).  Labels keep their index, so a unit may lack ``ops:i`` for some
# ``i``, or have no point left.


def _provider(block, prof):
    """The offered points of ``block`` (a unit: its name is the unit's key, a block's name
    or a call id; ``tree_plan`` asks with a call's row) as options."""
    out = []
    row = prof.calls.get(block.name)  # a block's first call, a call unit; not a run
    layer = row.layer if row is not None else block.name
    for i in itertools.count():
        point = _point(prof, block.name, i)
        if point is None:
            break
        (held, seconds), policy = point
        if block.calls == 1 and not offered(prof, block.name, i):
            continue  # keep holds less at no extra time (NOTE [ Points keep beats ])
        cost = prof.policy_costs.get(block.name, {}).get(f"{KIND}:{i}", (held, seconds))
        if cost is None:  # its run failed (and the warning said it was left out)
            continue
        held, seconds = cost
        out.append((f"{KIND}:{i}", block.input_bytes + held, seconds, (layer,), policy))
    return out


def _wrap(forward, policy: OpPolicy):
    return recompute_forward(forward, policy=policy)


register_option(KIND, _provider, _wrap, load=OpPolicy.from_dict)
