"""Helpers shared by the planner tests that apply a plan: held bytes and one training step,
with and without the plan, on the same model and input."""

from __future__ import annotations

import itertools
from typing import NamedTuple

import paddle
from _rc_helpers import gc_paused
from paddle.base import core

from paddle_recompute._planner.profile.measure import nbytes_of
from paddle_recompute.testing import snapshot_grads


def held_after_forward(model, x, seed: int | None = None) -> int:
    """Host bytes the forward leaves allocated, less its output's."""
    if seed is not None:
        paddle.seed(seed)
    with gc_paused():
        before = core.host_memory_stat_current_value("Allocated", 0)
        out = model(x)
        return core.host_memory_stat_current_value("Allocated", 0) - before - nbytes_of(out)


def train_step(model, x, seed: int | None = None):
    """``(loss, grads)`` of ``mean(model(x) ** 2)``; the gradients of the parameters and of
    ``x``, which are cleared afterwards."""
    if seed is not None:
        paddle.seed(seed)
    loss = (model(x) ** 2).mean()
    loss.backward()
    grads = snapshot_grads(model)
    grads["x"] = x.grad.clone()
    model.clear_gradients()
    x.clear_gradient()
    return float(loss), grads


class Applied(NamedTuple):
    ref_loss: float
    ref_grads: dict
    base: int  # bytes held without the plan
    held: int  # bytes held under it
    loss: float
    grads: dict


def apply_and_step(plan, model, x, seed: int | None = None) -> Applied:
    """A step and the held bytes without ``plan``, then both under it."""
    ref_loss, ref_grads = train_step(model, x, seed)
    base = held_after_forward(model, x, seed)
    model.clear_gradients()
    with plan.apply():
        held = held_after_forward(model, x, seed)
        model.clear_gradients()
        loss, grads = train_step(model, x, seed)
    return Applied(ref_loss, ref_grads, base, held, loss, grads)


def offered_points(prof):
    """``(block, modelled bytes, measured bytes, policy)`` of every ``ops`` point offered to
    each block of ``prof`` (NOTE [ Kept bytes ]: the two byte counts should be equal)."""
    from paddle_recompute._planner.options import ops as op_options

    for block in prof.blocks:
        for i in itertools.count():
            point = op_options._point(prof, block, i)
            if point is None:
                break
            if not op_options.offered(prof, block, i):
                continue  # keep holds less: neither offered nor measured
            (model_bytes, _), policy = point
            measured, _ = prof.policy_costs[block][f"{op_options.KIND}:{i}"]
            yield block, model_bytes, measured, policy
