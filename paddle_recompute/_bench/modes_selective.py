"""Opt-in benchmark modes: selective policies, transformer presets and the planner.

Registered with ``default=False``: ``paddle-recompute bench`` runs them by name or with
``--modes all``.  Each is exact (losses equal ``none``'s bit for bit).
"""

from __future__ import annotations

from typing import Any

from paddle import nn

from .. import policies
from .._api import recompute
from .._plan import plan
from .._presets import apply_recompute_granularity
from .blocks import Runner, plain_runner
from .modes import register_mode

__all__: list[str] = []


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


for _name in ("save_matmuls", "save_matmuls_no_batch"):
    register_mode(f"ours {_name}", _policy(getattr(policies, _name)), default=False,
                  description=f"non-reentrant, policy=policies.{_name}")
register_mode("ours save_matmuls_no_batch+masks",
              _policy(policies.save_any_of(policies.save_matmuls_no_batch, policies.save_dropout_masks)),
              default=False, description="non-reentrant, policy=save_any_of(save_matmuls_no_batch, "
                                         "save_dropout_masks): dropout outputs rebuilt from masks")
register_mode("ours save_matmuls_except_scores+masks",
              _policy(policies.save_matmuls_except_scores_and_masks),
              default=False, description="non-reentrant, policy=save_matmuls_except_scores_and_masks: "
                                         "Q·Kᵀ, norms, activations and dropout outputs recomputed")
for _granularity in ("full_attn", "core_attn", "selective"):
    register_mode(f"ours {_granularity}", prepare=_preset(_granularity), default=False,
                  description=f"apply_recompute_granularity(block, {_granularity!r}) on every block")
for _fraction in (0.5, 0.25):
    register_mode(f"ours plan {int(_fraction * 100)}%", prepare=_planned(_fraction), default=False,
                  description=f"plan(model, x, budget={_fraction}).apply(model): whole blocks or "
                              "sublayers recomputed to fit the budget")
