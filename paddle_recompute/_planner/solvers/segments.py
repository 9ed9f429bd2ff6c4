"""Optimal segmentation of a chain for ``recompute_sequential``: pure Python, no framework.

The cost model is NOTE [ Segment model ] in ``_planner/solvers/blocks.py``.  Solvers share the
signature ``solver(stages, budget) -> Segmentation``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .blocks import InfeasibleBudget

__all__ = ["Stage", "Segmentation", "segmentation_cost", "solve_segments",
           "sqrt_segments", "brute_force_segments", "SEGMENT_SOLVERS"]


@dataclass(frozen=True)
class Stage:
    """One callable of a chain: bytes it saves for backward, bytes of its output, seconds."""

    saved: float
    output: float
    time: float


@dataclass(frozen=True)
class Segmentation:
    """Start index of each segment (the first is 0), with the predicted peak and extra time."""

    starts: tuple[int, ...]
    peak: float
    time: float


def segmentation_cost(stages: Sequence[Stage], starts: Sequence[int]) -> Segmentation:
    """Peak and recompute time of cutting ``stages`` at ``starts`` (NOTE [ Segment model ])."""
    starts = tuple(starts)
    ends = starts[1:] + (len(stages),)
    boundary = sum(stages[e - 1].output for e in ends[:-1])
    biggest = max(sum(s.saved for s in stages[a:e]) for a, e in zip(starts, ends, strict=True))
    time = sum(s.time for s in stages[:starts[-1]])
    return Segmentation(starts, boundary + biggest, time)


def _key(budget):
    if budget is None:
        return lambda s: (s.peak, s.time, len(s.starts), s.starts)
    return lambda s: (s.time, s.peak, len(s.starts), s.starts)


def _pick(candidates: list, budget) -> Segmentation:
    if budget is not None:
        fitting = [c for c in candidates if c.peak <= budget]
        if not fitting:
            raise InfeasibleBudget(budget, min(c.peak for c in candidates), "peak memory")
        candidates = fitting
    return min(candidates, key=_key(budget))


def _check(stages: Sequence[Stage]) -> None:
    if not stages:
        raise ValueError("segments: the chain is empty")
    if any(min(s.saved, s.output, s.time) < 0 for s in stages):
        raise ValueError("segments: stage costs must be >= 0")


def solve_segments(stages: Sequence[Stage], budget: float | None = None) -> Segmentation:
    """Exact: for every cap ``M`` on a segment's saved bytes (each contiguous sum is a
    candidate), a prefix DP finds the least boundary bytes for every start of the last
    segment; the optimum's own cap is among the candidates, so the best candidate over all
    caps is optimal.  O(n^4) for n stages (n = 48: about 5 million steps).

    Raises:
        InfeasibleBudget: no segmentation has ``peak <= budget``.
    """
    _check(stages)
    n = len(stages)
    prefix = [0.0] + list(itertools.accumulate(s.saved for s in stages))
    caps = sorted({prefix[j] - prefix[i] for i in range(n) for j in range(i + 1, n + 1)})
    candidates = []
    for cap in caps:
        cost, back = _boundary_dp(stages, prefix, cap)
        for last in range(n):
            if cost[last] < math.inf and prefix[n] - prefix[last] <= cap:
                candidates.append(segmentation_cost(stages, _starts(back, last)))
    return _pick(candidates, budget)


def _boundary_dp(stages, prefix, cap) -> tuple[list, list]:
    """cost[j]: least boundary bytes cutting stages[:j] into segments saving <= cap each."""
    n = len(stages)
    cost = [0.0] + [math.inf] * n
    back = [-1] * (n + 1)
    for j in range(1, n + 1):
        for i in range(j - 1, -1, -1):
            if prefix[j] - prefix[i] > cap:
                break
            value = cost[i] + stages[j - 1].output
            if value < cost[j]:
                cost[j], back[j] = value, i
    return cost, back


def _starts(back: list, last: int) -> tuple[int, ...]:
    out = [last]
    while out[-1] > 0:
        out.append(back[out[-1]])
    return tuple(reversed(out))


def sqrt_segments(stages: Sequence[Stage], budget: float | None = None) -> Segmentation:
    """Chen et al.'s rule: ``ceil(sqrt(n))`` segments of equal length (the budget only
    checked, not used to choose).

    Raises:
        InfeasibleBudget: the rule's segmentation exceeds ``budget``.
    """
    _check(stages)
    n = len(stages)
    k = math.ceil(math.sqrt(n))
    size = n // k
    return _pick([segmentation_cost(stages, tuple(range(0, size * k, size)))], budget)


def brute_force_segments(stages: Sequence[Stage], budget: float | None = None) -> Segmentation:
    """Every one of the 2^(n-1) segmentations (reference for tests).

    Raises:
        InfeasibleBudget: no segmentation has ``peak <= budget``.
    """
    _check(stages)
    n = len(stages)
    candidates = [segmentation_cost(stages, (0,) + cuts)
                  for r in range(n) for cuts in itertools.combinations(range(1, n), r)]
    return _pick(candidates, budget)


SEGMENT_SOLVERS: dict[str, Callable[..., Segmentation]] = {
    "exact": solve_segments, "sqrt": sqrt_segments, "brute_force": brute_force_segments,
}
