"""Optional calibration of the planner's times: measured growth of a forward + backward.

A rerun's own time (``LayerProfile.recompute_s``) overstates what an option costs a
training step whenever dropping activations also saves memory traffic, and by different
factors for different options (on the CPU GPT benchmark: MLP sublayer rerun ~65 ms, step
growth ~30 ms per block; whole block ~190 ms and ~143 ms).  Calibration applies each option
to every block alike (same type, saved and input bytes) at once, times a forward plus a
``paddle.grad`` backward (parameters' ``.grad`` untouched; random states and stateful
buffers put back), and takes the growth over the unchanged model (timed right before and
after, after one warm-up step) per block; medians over ``rounds``.  A round costs two
forward + backward passes per option, so calibration is slow and, on a busy machine,
noisy.  The results are stored in ``Profile.step_costs`` and reused.
"""

from __future__ import annotations

import functools
import statistics
from dataclasses import replace

from ..._core.amp import grad_enabled, set_grad_enabled
from ..._entry.routing import route_forwards
from ..harness import Session
from .kinds import wrap_of, wrapped_forward

__all__ = ["calibrated"]


def calibrated(session: Session, cands: list, rounds: int) -> list:
    """``cands`` with times replaced by measured step growth (see the module docstring)."""
    prof = session.prof
    groups: dict = {}
    for i, b in enumerate(prof.block_profiles()):
        groups.setdefault((b.type, b.saved_bytes, b.input_bytes), []).append(i)
    missing = [(idx, c.name) for idx in groups.values() for c in cands[idx[0]]
               if wrap_of(c.kind) is not None
               and c.name not in prof.step_costs.get(prof.blocks[idx[0]], {})]
    if missing:
        _measure(session, cands, missing, rounds)
    return [[replace(c, time=prof.step_costs[prof.blocks[i]][c.name])
             if c.name in prof.step_costs.get(prof.blocks[i], {}) else c for c in cs]
            for i, cs in enumerate(cands)]


def _measure(session: Session, cands, missing, rounds) -> None:
    prof, table = session.prof, session.table
    samples: dict = {key: [] for key in [(tuple(idx), name) for idx, name in missing]}
    grad = grad_enabled()
    try:
        set_grad_enabled(True)
        session.step()  # warm-up: first-touch allocations would bias the base
        for _ in range(rounds):
            before = session.step()
            for (idx, name), out in samples.items():
                # bases alternate with options: each option against the two around it,
                # since the machine's load drifts over a round
                chosen = [_candidate(cands[i], name) for i in idx]
                with route_forwards([(table[t], functools.partial(wrapped_forward, c.kind, payload=c.payload))
                              for c in chosen for t in c.targets]):
                    timed = session.step()
                after = session.step()
                out.append((timed - (before + after) / 2) / len(idx))
                before = after
    finally:
        set_grad_enabled(grad)
    for (idx, name), values in samples.items():
        for i in idx:
            prof.step_costs.setdefault(prof.blocks[i], {})[name] = max(statistics.median(values), 0.0)


def _candidate(options: list, name: str):
    return next(c for c in options if c.name == name)
