"""Solvers for "what to recompute" under a memory budget: pure Python, no framework.

NOTE [ Planner model ]: a model is a chain of blocks.  Each block has candidate options
(``Option``): ``memory`` is the bytes the block holds from its forward to its backward
under that option, ``time`` the extra seconds the option costs (the recomputation).
Typical options are "keep" (saved bytes, no extra time) and "full" (only the block's
inputs held, one extra forward of the block).  A plan picks one option per block; its
predicted activation memory is the sum of the chosen ``memory`` and its predicted extra
time the sum of the chosen ``time``.  Solvers minimise the time subject to
``sum(memory) <= budget``: a multiple-choice knapsack.  Every block solver has the
signature ``solver(blocks, budget) -> Solution``.

NOTE [ Segment model ]: ``recompute_sequential`` cuts a chain of stages into contiguous
segments and recomputes every segment but the last.  Stage ``i`` saves ``saved[i]`` bytes,
outputs ``output[i]`` bytes and runs in ``time[i]`` seconds.  Following Chen et al. (2016,
"Training deep nets with sublinear memory cost"), a segmentation ``S_1..S_k`` costs

    peak = sum(output of the last stage of S_j, j < k) + max_j sum(saved of S_j)
    time = sum(time of the stages in S_1..S_{k-1})

(the boundary tensors stay alive; at most one segment's activations exist at a time: the
last one after the forward, then each recomputed one during its backward).  Uniform
stages give the sqrt(n) rule; the exact solver does not assume uniformity.  Segment
solvers share the signature ``solver(stages, budget) -> Segmentation``; with
``budget=None`` they minimise the peak (then the time), else the time subject to
``peak <= budget`` (then the peak).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = [
    "Option", "Solution", "InfeasibleBudget", "solve_exact", "solve_greedy",
    "solve_brute_force", "min_memory", "BLOCK_SOLVERS",
]


@dataclass(frozen=True)
class Option:
    """One way to run a block: ``memory`` bytes held for backward, ``time`` extra seconds."""

    name: str
    memory: float
    time: float


@dataclass(frozen=True)
class Solution:
    """Index of the chosen option per block, with the totals it predicts."""

    choice: tuple[int, ...]
    memory: float
    time: float


class InfeasibleBudget(ValueError):
    """No choice fits the budget; ``minimum`` is the least achievable memory."""

    def __init__(self, budget: float, minimum: float, what: str = "activation memory",
                 note: str = ""):
        self.budget = budget
        self.minimum = minimum
        super().__init__(
            f"budget {budget:,.0f} bytes is below the minimum achievable {what} "
            f"{minimum:,.0f} bytes{note}; raise the budget to at least that"
        )


def _check_blocks(blocks: Sequence[Sequence[Option]]) -> None:
    for b, options in enumerate(blocks):
        if not options:
            raise ValueError(f"planner: block {b} has no options")
        for o in options:
            if o.memory < 0 or o.time < 0 or math.isnan(o.memory) or math.isnan(o.time):
                raise ValueError(f"planner: block {b} option {o.name!r} has a negative or NaN cost")


def min_memory(blocks: Sequence[Sequence[Option]]) -> float:
    """The least total memory any choice reaches."""
    return sum(min(o.memory for o in options) for options in blocks)


def _totals(blocks, choice) -> Solution:
    picked = [blocks[b][i] for b, i in enumerate(choice)]
    return Solution(tuple(choice), sum(o.memory for o in picked), sum(o.time for o in picked))


def solve_exact(blocks: Sequence[Sequence[Option]], budget: float, *, resolution: float = 0) -> Solution:
    """Exact multiple-choice knapsack by dynamic programming over Pareto frontiers.

    After block ``b`` the frontier holds every (memory, time) pair reachable by the blocks so
    far that no other pair beats in both; extending it by each option of the next block and
    pruning again keeps the optimum, so the final frontier's fastest point within the budget
    is optimal.  No discretisation: costs are compared as given (exact for integer bytes).
    The frontier has at most one point per distinct memory sum within the budget; with
    ``resolution > 0`` memories are first rounded up to multiples of it, which bounds the
    frontier by ``budget / resolution + 1`` points, keeps the plan within the budget for the
    true costs, and is optimal for the rounded ones.

    Ties in time go to the smaller memory, then to the lexicographically first choice.

    Raises:
        InfeasibleBudget: ``budget`` is below :func:`min_memory`.
    """
    _check_blocks(blocks)
    mem = _rounder(resolution)
    # NOTE [ Choices by back-pointer ]: a point is (memory, time, key); its choice is read
    # back at the end through ``parents`` (per block, per point: the point it extends and
    # the option).  ``key`` ranks the point's choice among its frontier's choices in
    # lexicographic order, and a candidate extending the point of rank ``r`` by option ``i``
    # gets ``r * len(options) + i``: the order of its choice, so sorting the triples breaks
    # ties as sorting by the choices themselves would, and no choice tuple is built.
    frontier: list = [(0, 0.0, 0)]
    parents: list = []
    for options in blocks:
        frontier, back = _extend(frontier, [(mem(o.memory), o.time) for o in options], budget)
        if not frontier:
            raise InfeasibleBudget(budget, min_memory(blocks))
        parents.append(back)
    best = min(range(len(frontier)), key=lambda n: (frontier[n][1], frontier[n][0], frontier[n][2]))
    choice = []
    for back in reversed(parents):
        best, i = back[best]
        choice.append(i)
    return _totals(blocks, choice[::-1])


def _extend(frontier: list, costs: list, budget: float) -> tuple[list, list]:
    """The frontier after one more block of option ``costs`` (NOTE [ Choices by back-pointer ]),
    and per point its (index in ``frontier``, option)."""
    size = len(costs)
    extended = [(m + om, t + ot, r * size + i)
                for m, t, r in frontier for i, (om, ot) in enumerate(costs) if m + om <= budget]
    PointCount["candidates"] += len(extended)
    kept = _pareto(extended)
    PointCount["kept"] += len(kept)
    index_of = {r: n for n, (_, _, r) in enumerate(frontier)}
    back = [(index_of[key // size], key % size) for _, _, key in kept]
    rank = [0] * len(kept)
    for r, n in enumerate(sorted(range(len(kept)), key=lambda n: kept[n][2])):
        rank[n] = r
    return [(m, t, rank[n]) for n, (m, t, _) in enumerate(kept)], back


PointCount = {"candidates": 0, "kept": 0}  # points ``solve_exact`` made and kept (for tests)


def _rounder(resolution: float) -> Callable[[float], float]:
    if resolution < 0:
        raise ValueError(f"planner: resolution must be >= 0, got {resolution}")
    if not resolution:
        return lambda m: m
    return lambda m: math.ceil(m / resolution) * resolution


def _pareto(points: list) -> list:
    """Points not dominated in (memory, time); one per memory value."""
    points.sort()
    out: list = []
    for p in points:
        if not out or p[1] < out[-1][1]:
            out.append(p)
    return out


def solve_greedy(blocks: Sequence[Sequence[Option]], budget: float) -> Solution:
    """Heuristic: start from each block's fastest option, then repeatedly take the switch
    that frees the most memory per extra second until the budget fits.  Not optimal
    (a baseline for :func:`solve_exact`).

    Raises:
        InfeasibleBudget: ``budget`` is below :func:`min_memory`.
    """
    _check_blocks(blocks)
    if min_memory(blocks) > budget:
        raise InfeasibleBudget(budget, min_memory(blocks))
    choice = [min(range(len(opts)), key=lambda i, o=opts: (o[i].time, o[i].memory))
              for opts in blocks]
    while _totals(blocks, choice).memory > budget:
        b, i = max(_switches(blocks, choice), key=lambda s: s[2])[:2]
        choice[b] = i
    return _totals(blocks, choice)


def _switches(blocks, choice):
    for b, options in enumerate(blocks):
        cur = options[choice[b]]
        for i, o in enumerate(options):
            freed = cur.memory - o.memory
            if freed > 0:
                yield b, i, freed / max(o.time - cur.time, 1e-12)


def solve_brute_force(blocks: Sequence[Sequence[Option]], budget: float) -> Solution:
    """Every combination (reference for tests; exponential).

    Raises:
        InfeasibleBudget: ``budget`` is below :func:`min_memory`.
    """
    _check_blocks(blocks)
    feasible = [_totals(blocks, c) for c in itertools.product(*(range(len(o)) for o in blocks))]
    feasible = [s for s in feasible if s.memory <= budget]
    if not feasible:
        raise InfeasibleBudget(budget, min_memory(blocks))
    return min(feasible, key=lambda s: (s.time, s.memory, s.choice))


BLOCK_SOLVERS: dict[str, Callable[..., Solution]] = {
    "exact": solve_exact, "greedy": solve_greedy, "brute_force": solve_brute_force,
}
