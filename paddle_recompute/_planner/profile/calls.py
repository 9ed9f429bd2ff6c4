"""The call tree of a profiled forward: one row per call of a layer (NOTE [ Region tree ])."""

from __future__ import annotations

import statistics

from .counter import Counter
from .result import CallProfile

__all__ = ["call_rows", "shared_call_inputs"]


def call_rows(counter: Counter, runs: list[dict]) -> dict[str, CallProfile]:
    """Rows from the counter and each run's call records (``_Instrumented.calls``); times
    are medians over the runs that made the same call."""
    first = runs[0]
    by_call = counter.by_call()
    rows: dict[str, CallProfile] = {}
    for call, (layer, index, parent, _, _, inputs, _) in first.items():
        inclusive, own = by_call.get(call, (0, 0))
        rows[call] = CallProfile(
            id=call, layer=layer, index=index, parent=parent, saved_bytes=inclusive,
            self_bytes=own, input_bytes=_held_inputs(counter, call, inputs),
            saves=counter.packs.get(call, 0),
            forward_s=statistics.median(r[call][3] for r in runs if call in r),
            recompute_s=statistics.median(r[call][4] for r in runs if call in r))
    for call, row in rows.items():
        if row.parent is not None:
            rows[row.parent].children.append(call)
    for row in rows.values():
        row.chained = [_straight(first[a][6], first[b][6])
                       for a, b in zip(row.children, row.children[1:], strict=False)]
    for call, shared in counter.shared_by_children().items():
        position = {c: i for i, c in enumerate(rows[call].children)}
        spans: dict = {}
        for savers, n in shared:
            at = sorted(position[c] for c in savers)
            spans[(at[0], at[-1])] = spans.get((at[0], at[-1]), 0) + n
        rows[call].shared_bytes = [(lo, hi, n) for (lo, hi), n in sorted(spans.items())]
    return rows


def _straight(before: tuple, after: tuple) -> bool:
    """Whether a call took the output of the call before it as its sole argument, with no
    operator run between them (``_link`` in ``profile/measure.py``)."""
    sole, ops_in = after[:2]
    out, ops_out = before[2:]
    return out is not None and sole == out and ops_in == ops_out


def _held_inputs(counter: Counter, call: str, inputs: list) -> int:
    """Bytes a region around ``call`` adds by holding its inputs: those saved inside it (then
    counted in it) or saved nowhere; an input some layer outside it saves is held anyway."""
    return sum(n for key, n in inputs if counter.inside_call(key, call) is not False)


def shared_call_inputs(counter: Counter, calls: dict) -> list:
    """``(bytes, call ids)`` of each input that several calls count in their ``input_bytes``
    while no layer saves it (a causal mask every decoder layer and its attention take):
    regions around several of them hold it once (NOTE [ Shared call inputs ] in
    ``_planner/plan/shared_inputs.py``)."""
    takers: dict = {}
    for call, (_layer, _index, _parent, _f, _r, inputs, *_) in calls.items():
        for key, n in inputs:
            if counter.inside_call(key, call) is None:
                takers.setdefault(key, [n, []])[1].append(call)
    return [(n, tuple(names)) for n, names in takers.values() if len(names) > 1]
