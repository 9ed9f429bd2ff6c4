"""What one recompute region costs a step beyond its rerun, measured in the model.

A region's rerun time (``CallProfile.recompute_s``) leaves out what the region itself
costs: the state it captures and replays (random streams, stateful layers' buffers), the
hook frames, the unpack that starts the rerun in backward.  For a large layer that is
noise; for a ``BatchNorm`` or an activation it is many times the rerun (measured on CPU:
a ``BatchNorm2D`` on 2x8x8x8 reruns in ~27 us, the region costs ~85 us more alone and more
inside a model), so a planner blind to it picks dozens of tiny regions.  ``plan`` measures
it once per profile: up to ``_LEAVES`` leaf calls that save bytes become regions at once,
a forward and backward with them is timed against the plain ones on either side of it
(interleaved with the next measurement, which shares a plain step with it; medians over
``_ROUNDS``), and the same with the model's large parts (its stages) as regions.  A region
also costs in proportion to what it saves (measured on CPU: a run of a ShuffleNet's first
stages, predicted 1.7 ms from its reruns, cost 11.5 ms: each saved tensor is packed and
unpacked in Python, each BatchNorm's statistics are copied for the rerun), so the growth
less the reruns is fitted as ``region_s`` per region plus ``save_s`` per tensor saved
inside (``CallProfile.saves``); the tree planner adds both to every region's time.

Where the model has blocks alike called once per step (``options/alike.py``), both
measurements run inside the largest group's first block, alone on its captured call: its
leaf calls, then its children, as regions.  What a region costs is its own frames, packs
and state copies, which do not depend on the layers around it, and timing a block instead
of the step keeps this stage from growing with depth (on PaddleFormers' Llama, 4 layers,
hidden 512, whole steps made it 58 s of a 134 s plan).
"""

from __future__ import annotations

import statistics

from ..._core.amp import grad_enabled, set_grad_enabled
from ..._core.errors import RecomputeError
from ..._entry.routing import route_forwards
from ..harness import Session
from .kinds import recompute_forward

__all__ = ["measure_region_overhead"]

_LEAVES = 16
_ROUNDS = 3


def measure_region_overhead(session: Session, alike: dict | None = None) -> float:
    """``prof.region_s`` (and ``prof.save_s``), measured on first use (0.0 when nothing can
    be measured); inside a block alone when ``alike`` (first block -> its ``Alike``) has a
    group whose block holds leaf calls that save."""
    prof = session.prof
    if prof.region_s is not None:
        return prof.region_s
    timed, small, large = _where(session, alike or {})
    prof.region_s, prof.save_s = 0.0, 0.0
    if not small or not timed.params:
        return 0.0
    grad = grad_enabled()
    try:
        set_grad_enabled(True)
        if timed is session:  # whole steps: warm up (a block alone ran in the options'
            timed.step()  # rounds, if any; a cold first plain step moves one sample of three)
        fits = _growths(timed, [small, large] if large else [small])
    finally:
        set_grad_enabled(grad)
    prof.region_s, prof.save_s = _fit(fits)
    return prof.region_s


def _growths(session: Session, configs: list) -> list[tuple]:
    """Per list of layers in ``configs`` (the small regions, then the large ones): (regions,
    tensors they save, step growth less their reruns) with those layers as regions.  Each
    round times every configuration between plain steps, one plain step shared by the
    configurations on either side of it; a configuration that cannot be a region (a large
    part that raises) is dropped, so the small regions alone are fitted."""
    table = session.table
    growth: list = [[] for _ in configs]
    live = list(range(len(configs)))
    before = session.step()
    for _ in range(_ROUNDS):
        for i in list(live):
            try:
                with route_forwards([(table[name], recompute_forward) for name in configs[i]]):
                    step = session.step()
            except RecomputeError:
                if i == 0:
                    raise
                live.remove(i)
                continue
            after = session.step()
            growth[i].append(step - (before + after) / 2)
            before = after
    return [_fit_row(session.prof, configs[i], growth[i]) for i in live]


def _fit_row(prof, layers: list, growth: list) -> tuple:
    """(regions, tensors they save, median growth less their reruns) of ``layers``."""
    calls = [c for c in prof.calls.values() if c.layer in set(layers)]
    reruns = sum(prof.layers[name].recompute_s or 0.0 for name in layers)
    return len(calls), sum(c.saves for c in calls), statistics.median(growth) - reruns


def _fit(fits: list) -> tuple[float, float]:
    """``(a, b)`` with ``a * regions + b * saves`` = the growth of both measurements (small
    regions, large ones), neither negative; a per-region cost alone when they disagree."""
    (n1, s1, g1), *rest = fits
    if rest:
        n2, s2, g2 = rest[0]
        det = n1 * s2 - n2 * s1
        if det:
            a, b = (g1 * s2 - g2 * s1) / det, (n1 * g2 - n2 * g1) / det
            if a >= 0 and b >= 0:
                return a, b
            if a < 0 and s2:  # the large regions' growth per save
                return 0.0, max(g2 / s2, 0.0)
    return max(g1 / n1, 0.0), 0.0


def _where(session: Session, alike: dict) -> tuple:
    """(the session to time, the small layers, the large ones): the largest group's first
    block alone, its leaves and its children, when it has leaves that save; else the step."""
    prof = session.prof
    for first in sorted(alike, key=lambda b: -len(alike[b].members)):
        call = next((c for c in prof.calls.values() if c.layer == first), None)
        small = _leaf_layers(prof, inside=first)
        if call is not None and small:
            return alike[first].session, small, _large_layers(prof, [call])
    return session, _leaf_layers(prof), _large_layers(prof)


def _large_layers(prof, level: list | None = None) -> list[str]:
    """The children of the first call that has several (the model's stages, a Sequential's
    layers), from the top calls or from ``level``: few regions, many saves each; layers
    called elsewhere too are left out."""
    level = level or [c for c in prof.calls.values() if c.parent is None]
    while len(level) == 1 and level[0].children:
        level = [prof.calls[c] for c in level[0].children]
    names = [c.layer for c in level if c.parent is not None and c.saved_bytes > 0]
    return [n for n in dict.fromkeys(names)
            if sum(1 for c in prof.calls.values() if c.layer == n) == names.count(n)][:_LEAVES]


def _leaf_layers(prof, inside: str | None = None) -> list[str]:
    """Layers whose calls are all leaves inside the model (or inside the layer named
    ``inside``) that save bytes, the most frequent kind first (the regions a fine plan
    would pick)."""
    prefix = None if inside is None else (f"{inside}." if inside else "")
    leaves = [c for c in prof.calls.values()
              if not c.children and c.parent is not None and c.saved_bytes > 0
              and (prefix is None or c.layer.startswith(prefix))]
    names = list(dict.fromkeys(c.layer for c in leaves))
    names = [n for n in names if all(not prof.calls[c].children for c in prof.calls
                                     if prof.calls[c].layer == n)]
    return names[:_LEAVES]
