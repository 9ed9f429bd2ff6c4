"""What one recompute region costs a step beyond its rerun, measured in the model.

A region's rerun time (``CallProfile.recompute_s``) leaves out what the region itself
costs: the state it captures and replays (random streams, stateful layers' buffers), the
hook frames, the unpack that starts the rerun in backward.  For a large layer that is
noise; for a ``BatchNorm`` or an activation it is many times the rerun (measured on CPU:
a ``BatchNorm2D`` on 2x8x8x8 reruns in ~27 us, the region costs ~85 us more alone and more
inside a model), so a planner blind to it picks dozens of tiny regions.  ``plan`` measures
it once per profile: up to ``_LEAVES`` leaf calls that save bytes become regions at once,
a forward and backward with them is timed against one without (interleaved, medians over
``_ROUNDS``), and the growth less their reruns, per region, is ``Profile.region_s``; the
tree planner adds it to every region's time.
"""

from __future__ import annotations

import statistics

from .._core.amp import grad_enabled, set_grad_enabled
from .calibrate import Wrapped, step, trainable_params
from .options import recompute_forward

__all__ = ["measure_region_overhead"]

_LEAVES = 16
_ROUNDS = 3


def measure_region_overhead(call, table: dict, roots: tuple, prof) -> float:
    """``prof.region_s``, measured on first use (0.0 when nothing can be measured)."""
    if prof.region_s is not None:
        return prof.region_s
    layers = _leaf_layers(prof)
    params = trainable_params(table)
    if not layers or not params:
        prof.region_s = 0.0
        return 0.0
    regions = sum(prof.layers[name].calls for name in layers)
    reruns = sum(prof.layers[name].recompute_s or 0.0 for name in layers)
    grad = grad_enabled()
    try:
        set_grad_enabled(True)
        step(call, roots, params)  # warm-up
        growth = []
        for _ in range(_ROUNDS):
            before = step(call, roots, params)
            with Wrapped([(table[name], recompute_forward) for name in layers]):
                timed = step(call, roots, params)
            after = step(call, roots, params)
            growth.append(timed - (before + after) / 2)
    finally:
        set_grad_enabled(grad)
    prof.region_s = max((statistics.median(growth) - reruns) / regions, 0.0)
    return prof.region_s


def _leaf_layers(prof) -> list[str]:
    """Layers whose calls are all leaves inside the model that save bytes, the most
    frequent kind first (the regions a fine plan would pick)."""
    leaves = [c for c in prof.calls.values()
              if not c.children and c.parent is not None and c.saved_bytes > 0]
    names = list(dict.fromkeys(c.layer for c in leaves))
    names = [n for n in names if all(not prof.calls[c].children for c in prof.calls
                                     if prof.calls[c].layer == n)]
    return names[:_LEAVES]
