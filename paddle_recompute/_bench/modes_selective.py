"""Opt-in benchmark modes: selective policies, transformer presets and the planner.

Registered with ``default=False``: ``paddle-recompute bench`` runs them by name or with
``--modes all``.  Each is exact (losses equal ``none``'s bit for bit).
"""

from __future__ import annotations

from typing import Any

from paddle import nn

from .._entry.presets import apply_recompute_granularity
from .._entry.recompute import recompute
from .._planner.plan.make import plan
from .._selective import policies
from .blocks import Runner, plain_runner
from .registry import register_mode

__all__ = ["register"]


def _policy(policy) -> Runner:
    return lambda block, x: recompute(block, x, use_reentrant=False, policy=policy)


def _blocks(model: nn.Layer) -> list:
    blocks = getattr(model, "blocks", None)
    if blocks is None:
        raise ValueError("this model has no `blocks` to apply a preset or plan to")
    return list(blocks)


def _preset(granularity: str):
    def prepare(model: nn.Layer, inputs: Any) -> Runner:
        for block in _blocks(model):
            apply_recompute_granularity(block, granularity)
        return plain_runner
    return prepare


def _planned(budget: float):
    def prepare(model: nn.Layer, inputs: Any) -> Runner:
        plan(model, inputs, budget=budget, blocks=_blocks(model)).apply(model)
        return plain_runner
    return prepare


def register() -> None:
    """Register the opt-in modes (after the default ones, so listings keep their order)."""
    for name in ("save_matmuls", "save_matmuls_no_batch"):
        register_mode(f"ours {name}", _policy(getattr(policies, name)), default=False,
                      description=f"non-reentrant, policy=policies.{name}")
    register_mode("ours save_matmuls_no_batch+masks",
                  _policy(policies.save_any_of(policies.save_matmuls_no_batch, policies.save_dropout_masks)),
                  default=False, description="non-reentrant, policy=save_any_of(save_matmuls_no_batch, "
                                             "save_dropout_masks): dropout outputs rebuilt from masks")
    register_mode("ours save_matmuls_except_scores+masks",
                  _policy(policies.save_matmuls_except_scores_and_masks),
                  default=False, description="non-reentrant, policy=save_matmuls_except_scores_and_masks: "
                                             "Q·Kᵀ, norms, activations and dropout outputs recomputed")
    for granularity in ("full_attn", "core_attn", "selective"):
        register_mode(f"ours {granularity}", prepare=_preset(granularity), default=False,
                      description=f"apply_recompute_granularity(block, {granularity!r}) on every block")
    for fraction in (0.5, 0.25):
        register_mode(f"ours plan {int(fraction * 100)}%", prepare=_planned(fraction), default=False,
                      description=f"plan(model, x, budget={fraction}).apply(model): whole blocks or "
                                  "sublayers recomputed to fit the budget")
