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

import paddle

from .._core import tree
from .._core.amp import grad_enabled, set_grad_enabled
from .._core.state import ForwardState
from .._entry.routing import route_forwards
from .options import wrap_of, wrapped_forward
from .profile import clock, sync

__all__ = ["calibrated", "trainable_params", "step"]


def calibrated(call, table: dict, roots: tuple, prof, cands: list, rounds: int) -> list:
    """``cands`` with times replaced by measured step growth (see the module docstring)."""
    groups: dict = {}
    for i, b in enumerate(prof.block_profiles()):
        groups.setdefault((b.type, b.saved_bytes, b.input_bytes), []).append(i)
    missing = [(idx, c.name) for idx in groups.values() for c in cands[idx[0]]
               if wrap_of(c.kind) is not None
               and c.name not in prof.step_costs.get(prof.blocks[idx[0]], {})]
    if missing:
        _measure(call, table, roots, trainable_params(table), prof, cands, missing, rounds)
    return [[replace(c, time=prof.step_costs[prof.blocks[i]][c.name])
             if c.name in prof.step_costs.get(prof.blocks[i], {}) else c for c in cs]
            for i, cs in enumerate(cands)]


def trainable_params(table: dict) -> list:
    """The parameters of the layers in ``table`` that take gradients, each once."""
    return list({id(p): p for layer in table.values() for p in layer.parameters()
                 if not p.stop_gradient}.values())


def _measure(call, table, roots, params, prof, cands, missing, rounds) -> None:
    samples: dict = {key: [] for key in [(tuple(idx), name) for idx, name in missing]}
    grad = grad_enabled()
    try:
        set_grad_enabled(True)
        step(call, roots, params)  # warm-up: first-touch allocations would bias the base
        for _ in range(rounds):
            before = step(call, roots, params)
            for (idx, name), out in samples.items():
                # bases alternate with options: each option against the two around it,
                # since the machine's load drifts over a round
                chosen = [_candidate(cands[i], name) for i in idx]
                with route_forwards([(table[t], functools.partial(wrapped_forward, c.kind, payload=c.payload))
                              for c in chosen for t in c.targets]):
                    timed = step(call, roots, params)
                after = step(call, roots, params)
                out.append((timed - (before + after) / 2) / len(idx))
                before = after
    finally:
        set_grad_enabled(grad)
    for (idx, name), values in samples.items():
        for i in idx:
            prof.step_costs.setdefault(prof.blocks[i], {})[name] = max(statistics.median(values), 0.0)


def _candidate(options: list, name: str):
    return next(c for c in options if c.name == name)


def step(call, roots, params) -> float:
    """Seconds one forward + ``paddle.grad`` backward of ``call`` took by the planner's
    clock (NOTE [ Planning clock ] in ``profile.py``; state put back, ``.grad`` untouched)."""
    fn, args, kwargs = call
    with ForwardState(True, roots).replayed():
        sync()
        start = clock()
        outs = [t for t in tree.flatten(fn(*args, **kwargs))[0]
                if not t.stop_gradient and t.is_floating_point()]
        paddle.grad(outs, params, grad_outputs=[paddle.ones_like(t) for t in outs],
                    allow_unused=True)
        sync()
        return clock() - start
