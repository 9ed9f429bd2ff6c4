"""Where the operator-level option ``ops`` is offered: the profile's blocks, and single calls
of any other layer where recording their operators can pay (NOTE [ Operator units ]).

NOTE [ Operator units ]: a *unit* is what one operator graph is recorded for and one ``ops``
option priced on.  A block is a unit (every call of it, keyed by its name); so is one call
of another layer, keyed by its call id (``CallProfile.id``: ``"layer"`` for its first call,
``"layer@k"`` for its k-th), so each call of a shared layer is a unit of its own.  The three
recording forwards record every unit at once, but each distinct graph is solved and each
offered point is measured (one forward and backward per point and round, shared by all
units), and a unit's options only help where its bytes move the budget.  So a call that is
not a block's is a unit when:

- it is made inside the model (the tree offers no region around the model's own call);
- the tensors saved for backward inside it are at least ``MIN_SHARE`` of the step's (a
  smaller region moves the budget little, and ``full`` already offers it whole);
- at least 2 and at most ``MAX_SAVES`` tensors are saved inside it (with one, ``keep`` and
  ``full`` are the only choices; its operators are not known before recording, and the
  saves bound the graph the exact solver takes and the recorded policy checks);
- it is no block's call, made inside none and makes none, and is made inside no other
  unit (one recording frame observes a call's operators; the outermost calls that qualify).

At most ``MAX_CALLS`` such calls are units, those saving the most bytes.

A run of calls (NOTE [ Runs of calls ] in ``options/apply_calls.py``) is a unit by the same rule,
its saves and bytes those of its members (and the bytes saved only by several of them),
keyed as its plan choice is named (``"caller[first:end]"``), when its caller is no block's
call, made inside none and makes none (the run of all of the model's own call's children is
not a region, so not a unit).  At most ``MAX_RUNS`` runs, those saving the most bytes, and
only of callers that do not nest (``options/op_runs.py`` records each caller whole, once).
A run unit's points are priced by the operator model (its operators' recorded times and the
measured cost of observing them), not measured like a call's: the plan's final measurement
(NOTE [ Final measurement ]) still times the plans that use them against plans that do not.

Then a model of stacked blocks plans as before, and a model without (a ``Sequential``
listing one block twice, a ResNet's stages) gets operator-level options on its few large
calls and runs.
"""

from __future__ import annotations

from .apply_calls import numbered_forward

__all__ = ["op_units", "op_runs", "unit_swaps", "unit_rerun_s", "MIN_SHARE", "MAX_SAVES",
           "MAX_CALLS", "MAX_RUNS"]

MIN_SHARE = 1 / 16  # of the step's bytes saved for backward
MAX_SAVES = 64  # tensors saved inside the call
MAX_CALLS = 8
MAX_RUNS = 8


def op_units(prof, calls: bool = True) -> dict[str, tuple[str, int | None]]:
    """Unit key -> (layer name, which call: ``None`` for every call): the blocks, and with
    ``calls`` the calls NOTE [ Operator units ] picks."""
    units: dict = {b: (b, None) for b in prof.blocks}
    if calls:
        for row in _worth_recording(prof):
            units[row.id] = (row.layer, row.index)
    return units


def _worth_recording(prof) -> list:
    blocked = _near_blocks(prof)
    fit = {row.id: row for row in prof.calls.values()
           if row.parent is not None and row.id not in blocked
           and 2 <= row.saves <= MAX_SAVES and _large(prof, row.saved_bytes)}
    outer = [row for row in fit.values() if not any(a in fit for a in _ancestors(prof, row))]
    return sorted(outer, key=lambda row: -row.saved_bytes)[:MAX_CALLS]


def op_runs(prof) -> dict[str, tuple[str, int, int]]:
    """Run key -> (caller's call id, first child, last child) for the runs NOTE [ Operator
    units ] picks."""
    blocked = _near_blocks(prof)
    found = []
    for row in prof.calls.values():
        if any(row.chained) and row.id not in blocked:
            found += [(saved, row.id, a, b) for saved, a, b in _fit_runs(prof, row)]
    found.sort(key=lambda f: -f[0])
    callers: list = []
    out: dict = {}
    for _, caller, a, b in found:
        if caller not in callers and any(_nested(prof, caller, c) for c in callers):
            continue
        if len(out) == MAX_RUNS:
            break
        callers.append(caller)
        out[f"{caller}[{a}:{b + 1}]"] = (caller, a, b)
    return out


def _fit_runs(prof, row) -> list[tuple[int, int, int]]:
    kids = [prof.calls[c] for c in row.children]
    out = []
    for a in range(len(kids)):
        for b in range(a + 1, len(kids)):
            if not row.chained[b - 1]:
                break
            if a == 0 and b == len(kids) - 1 and row.parent is None:
                continue  # the whole of the model's own call
            saves = sum(k.saves for k in kids[a:b + 1])
            saved = (sum(k.saved_bytes for k in kids[a:b + 1])
                     + sum(n for lo, hi, n in row.shared_bytes if a <= lo and hi <= b))
            if 2 <= saves <= MAX_SAVES and _large(prof, saved):
                out.append((saved, a, b))
    return out


def _large(prof, saved: int) -> bool:
    return saved > 0 and saved >= MIN_SHARE * prof.total_bytes


def _nested(prof, one: str, other: str) -> bool:
    return one in _ancestors(prof, prof.calls[other]) or other in _ancestors(prof, prof.calls[one])


def _ancestors(prof, row) -> list[str]:
    out = []
    while row.parent is not None:
        out.append(row.parent)
        row = prof.calls[row.parent]
    return out


def _near_blocks(prof) -> set[str]:
    """Calls of blocks, the calls made inside them and the calls that make them."""
    out: set = set()
    for row in prof.calls.values():
        ups = [row.id, *_ancestors(prof, row)]
        if any(prof.calls[c].layer in prof.blocks for c in ups):
            out.add(row.id)
        if row.layer in prof.blocks:
            out.update(ups)
    return out


def unit_of(prof, key: str) -> tuple[str, int | None]:
    """(layer name, call index or ``None``) of a unit key."""
    if key in prof.blocks:
        return key, None
    row = prof.calls[key]
    return row.layer, row.index


def unit_rerun_s(prof, key: str) -> float | None:
    """The profiled rerun seconds of a unit (a block's over all its calls)."""
    if key in prof.blocks:
        return prof.layers[key].recompute_s
    return prof.calls[key].recompute_s


def unit_swaps(table: dict, prof, wraps: dict) -> list:
    """``(layer, wrap)`` pairs for ``route_forwards`` putting ``wraps[key]`` on each unit:
    every call of a block, only its own call of a call unit (calls numbered as
    ``apply_calls`` numbers them, so several units of one shared layer share one swap)."""
    by_layer: dict = {}
    for key, wrap in wraps.items():
        layer, index = unit_of(prof, key)
        by_layer.setdefault(layer, {})[index] = wrap
    return [(table[layer], _dispatch(per_call, prof.layers[layer].calls))
            for layer, per_call in by_layer.items()]


def _dispatch(per_call: dict, calls: int):
    if None in per_call:
        return per_call[None]

    def swap(forward):
        return numbered_forward(forward, {k: w(forward) for k, w in per_call.items()}, calls)

    return swap
