"""Plans over the call tree: regions at any depth, each call of a shared layer on its own,
runs of calls that each took the one before's output straight (a ``Sequential``'s children,
a ``LayerList`` looped over, any layer's forward; NOTE [ Region tree ] in
``_planner/solvers/tree.py``).

The tree comes from ``Profile.calls``; each call's options are the registered kinds'
candidates for it (``keep`` and ``sub`` are the tree itself, so they are left out), each
region's time plus ``Profile.region_s`` and ``Profile.save_s`` per tensor saved inside it
(``_planner/options/region_overhead.py``).  The policies (``options/policies.py``) are measured on
the profile's blocks, so only a call of a block offers them; the operator-level ``ops``
(``options/ops.py``) is recorded and measured on units, the blocks and the calls of other
layers where it can pay (NOTE [ Operator units ] in ``options/units.py``: calls saving a large
share of the bytes with a moderate number of saves, each call of a shared layer on its
own), so a call of a block or a unit offers it, and a run of calls that is a unit offers
its ``ops`` points beside rerunning it whole (``Call.run_options``; priced by the operator
model, plus a region's own cost); every call inside the model offers ``full``.  A call made
from outside every layer (the model's own call) offers no option: recomputing
the whole step holds nothing between forward and backward but rebuilds all of it in
backward, which the additive model cannot see.  For the same reason the run of all the
children of such a call is not offered.
"""

from __future__ import annotations

from dataclasses import replace

from ..options.kinds import candidates_for
from ..options.ops import KIND as OPS
from ..profile.result import CallProfile, LayerProfile, Profile
from ..solvers.blocks import Option
from ..solvers.tree import Call, solve_tree, solve_tree_brute_force
from .value import BlockChoice

__all__ = ["call_tree", "solve_calls", "choices_of"]

_TREE_KINDS_LEFT_OUT = ("keep", "sub")  # the tree already offers both
_MAX_FRONTIER_POINTS = 4000  # above this many bytes-steps, frontiers are bucketed


def call_tree(prof: Profile, kinds) -> tuple[Call, dict]:
    """The solver's tree and, per call id, its candidates (by option index)."""
    kinds = [k for k in kinds if k not in _TREE_KINDS_LEFT_OUT]
    cands: dict[str, list] = {}
    top = [c for c in prof.calls.values() if c.parent is None]
    kids = tuple(_call(prof, c, kinds, cands) for c in top)
    outside = prof.total_bytes - sum(c.saved_bytes for c in top)
    return Call("<outside>", keep=outside, children=kids), cands


def _call(prof: Profile, row: CallProfile, kinds, cands: dict) -> Call:
    children = [prof.calls[c] for c in row.children]
    kids = tuple(_call(prof, c, kinds, cands) for c in children)
    options = ()
    if row.parent is not None and row.saved_bytes > 0:
        cands[row.id] = [replace(c, time=c.time + _region_cost(prof, row))
                         for kind in kinds for c in _candidates(prof, row, kind)
                         if c.memory < row.saved_bytes]
        options = tuple(Option(c.name, c.memory, c.time) for c in cands[row.id])
    chain = "full" in kinds and any(row.chained)  # a run recomputes its calls whole
    spans = tuple(row.shared_bytes) if chain else ()
    run_options = tuple(_run_options(prof, row, children, cands)) if chain and OPS in kinds else ()
    return Call(row.id, keep=row.self_bytes - sum(n for _, _, n in spans), options=options,
                run_options=run_options,
                children=kids, chain=chain, links=tuple(row.chained) if chain else (),
                run_memory=tuple(c.input_bytes for c in children) if chain else (),
                run_time=tuple(c.recompute_s + prof.save_s * c.saves for c in children)
                if chain else (),
                run_cost=prof.region_s or 0.0,
                whole_run=row.parent is not None, spans=spans)


def _run_options(prof: Profile, row: CallProfile, kids: list, cands: dict):
    """(first, last, options) per run of ``kids`` that is an ``ops`` unit (NOTE [ Operator
    units ]); its candidates go to ``cands`` under the run's key."""
    for a in range(len(kids)):
        for b in range(a + 1, len(kids)):
            key = f"{row.id}[{a}:{b + 1}]"
            if key not in prof.op_profiles:
                continue
            cost = (prof.region_s or 0.0) + prof.save_s * sum(k.saves for k in kids[a:b + 1])
            run = LayerProfile(name=key, type="run", depth=0, input_bytes=kids[a].input_bytes)
            cands[key] = [replace(c, time=c.time + cost)
                          for c in candidates_for(run, prof, (OPS,))]
            yield a, b, tuple(Option(c.name, c.memory, c.time) for c in cands[key])


def _region_cost(prof: Profile, row: CallProfile) -> float:
    """What a region around the call costs beyond its rerun (``_planner/options/region_overhead.py``)."""
    return (prof.region_s or 0.0) + prof.save_s * row.saves


def _candidates(prof: Profile, row: CallProfile, kind: str) -> list:
    """``kind``'s candidates for the call.  ``ops`` prices a block's call on the block's
    graph and any other call on its own, when it is a unit (NOTE [ Operator units ] in
    ``_planner/options/units.py``); the other kinds price a call as its layer."""
    unit = row.layer if kind != OPS or row.layer in prof.blocks else row.id
    return candidates_for(_as_layer_row(prof, row, unit), prof, (kind,))


def _as_layer_row(prof: Profile, row: CallProfile, name: str) -> LayerProfile:
    """The call as a block row named ``name``, so that every registered option kind can
    price it."""
    layer = prof.layers[row.layer]
    return LayerProfile(name=name, type=layer.type, depth=layer.depth, calls=1,
                        saved_bytes=row.saved_bytes, self_bytes=row.self_bytes,
                        input_bytes=row.input_bytes, forward_s=row.forward_s,
                        recompute_s=row.recompute_s, is_block=layer.is_block,
                        children=layer.children)


def solve_calls(prof: Profile, kinds, budget: int, solver: str = "exact"):
    """Solve the tree under ``budget`` bytes: (choices, memory, time).

    Raises:
        InfeasibleBudget: ``budget`` is below the least memory of any plan (named).
    """
    root, cands = call_tree(prof, kinds)
    if solver == "brute_force":
        sol = solve_tree_brute_force(root, budget)
    else:
        resolution = max(budget, 1) / _MAX_FRONTIER_POINTS if len(prof.calls) > 64 else 0
        sol = solve_tree(root, budget, resolution=resolution)
    return choices_of(prof, cands, sol.picks), sol.memory, sol.time


def choices_of(prof: Profile, cands: dict, picks) -> list[BlockChoice]:
    """The plan's choices for the solver's picks."""
    choices = []
    for pick in picks:
        row = prof.calls[pick.name]
        if pick.span is None:
            c = cands[pick.name][pick.option]
            choices.append(BlockChoice(pick.name, c.kind, c.name, c.memory, c.time, c.targets,
                                       payload=c.payload, types=_types(prof, c.targets),
                                       call=row.index, calls=prof.layers[row.layer].calls))
        else:
            a, b = pick.span
            kids = [prof.calls[k] for k in row.children[a:b + 1]]
            targets = tuple(k.layer for k in kids)
            members = tuple((k.index, prof.layers[k.layer].calls) for k in kids)
            key = f"{pick.name}[{a}:{b + 1}]"
            if pick.option >= 0:  # an operator-level option of the run
                c = cands[key][pick.option]
                choices.append(BlockChoice(key, c.kind, c.name, c.memory, c.time, targets,
                                           payload=c.payload, types=_types(prof, targets),
                                           span=(a, b + 1), members=members))
                continue
            choices.append(BlockChoice(
                key, "full", "run", kids[0].input_bytes,
                sum(k.recompute_s + prof.save_s * k.saves for k in kids) + (prof.region_s or 0.0),
                targets, types=_types(prof, targets), span=(a, b + 1), members=members))
    return choices


def _types(prof: Profile, targets) -> tuple[str, ...]:
    """The class names of ``targets`` (a loaded plan checks them on apply)."""
    return tuple(prof.layers[t].type for t in targets)
