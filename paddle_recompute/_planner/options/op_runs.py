"""Operator profiles of runs of calls (NOTE [ Runs of calls ] in ``options/apply_calls.py``), for the
operator-level option on a run (NOTE [ Operator units ] in ``options/units.py``).

A run's region numbers the operators of its members' forwards one after another; the
members were chained straight when profiled (no operator ran between them), so a run's
operators are a slice of its caller's.  So each caller of a run is recorded whole (as
``options/op_profile.py`` records a unit) over ``repeats`` forwards, with the operator counts at
which each of its child calls started and ended, and a run's graph is the slice from its
first member's start to its last member's end: a saved tensor made before the slice counts
as made by ``None`` (the run's input, which its region holds, or a tensor alive before it).
Callers are recorded in one pass, so no two of them nest (``op_units.op_runs`` picks so).
What observing costs per operator is measured as for units, with each caller an observed
region.
"""

from __future__ import annotations

import functools

from ..._core.amp import grad_enabled, set_grad_enabled
from ..._entry.routing import route_forwards
from ..harness import Session
from .op_profile import OpProfile, _forward, _grouped, _observation_seconds, _recording, signature
from .units import unit_swaps

__all__ = ["profile_runs"]


class _Slice:
    """Operators ``start..end-1`` of a recording, as ``profile_ops._grouped`` reads one: a
    tensor made before the slice is one the run's rerun has (made by ``None``)."""

    def __init__(self, rec, start: int, end: int):
        self.names, self.times = rec.names[start:end], rec.times[start:end]
        self.fixed, self.nbytes = rec.fixed[start:end], rec.nbytes[start:end]
        self.slots = [(None if p is None or p < start else p - start, c - start,
                       tuple(q - start for q in aliases if start <= q < end))
                      for p, c, aliases in rec.slots if start <= c < end]
        self.clock_s, self.wall_s = rec.clock_s, rec.wall_s  # the caller's whole call
        self._rec, self._start = rec, start

    def inputs(self, j: int) -> tuple[int, ...] | None:
        """The slice's operators whose outputs operator ``j`` took (None: unknown origin)."""
        made = self._rec.inputs(self._start + j)
        return None if made is None else tuple(p - self._start for p in made if p >= self._start)

    def forced(self, j: int) -> bool:
        return self._rec.forced(self._start + j)

    def signature(self) -> tuple:
        return signature(self)


def _marked(child: str, active: list, forward):
    def run(*args, **kwargs):
        rec = active[-1] if active else None
        start = len(rec.names) if rec is not None else 0
        out = forward(*args, **kwargs)
        if rec is not None:
            rec.marks[child] = (start, len(rec.names))
        return out

    return run


def profile_runs(session: Session, runs: dict, repeats: int = 3) -> dict[str, OpProfile]:
    """Record the runs ``runs`` (key -> (caller's call id, first child, last child)) over
    ``repeats`` forwards of ``call`` (state put back after each); key -> its
    :class:`OpProfile` (a run whose operators differ between the forwards gets none)."""
    prof = session.prof
    callers = list(dict.fromkeys(p for p, _, _ in runs.values()))
    recorded: list = []
    active: list = []
    wraps: dict = {p: _recording(p, recorded, active) for p in callers}
    for p in callers:
        for child in prof.calls[p].children:
            wraps[child] = functools.partial(_marked, child, active)
    grad = grad_enabled()
    try:
        set_grad_enabled(True)
        with route_forwards(unit_swaps(session.table, prof, wraps)):
            for _ in range(repeats):
                _forward(session)
        observing = _observation_seconds(session, callers, repeats)
    finally:
        set_grad_enabled(grad)
    per_op = observing / max(sum(len(r.names) for _, r, _ in recorded) / repeats, 1)
    out: dict = {}
    for key, (caller, first, last) in runs.items():
        kids = prof.calls[caller].children
        slices = [(key, _Slice(rec, rec.marks[kids[first]][0], rec.marks[kids[last]][1]))
                  for name, rec, _ in recorded
                  if name == caller and kids[first] in rec.marks and kids[last] in rec.marks]
        if len(slices) == repeats and len({s.signature() for _, s in slices}) == 1:
            out[key] = _grouped(slices, repeats, per_op)
    return out
