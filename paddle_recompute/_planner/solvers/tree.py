"""Choose recompute regions from a model's call tree: an exact dynamic program, pure Python.

NOTE [ Region tree ]: the forward is a tree of calls: the root (what runs outside every
layer) and, under each call, the calls of sublayers it makes, in order; a layer called
three times (shared weights) is three calls.  A call ``v`` has ``keep`` bytes: the
tensors saved for backward whose savers all run inside ``v`` but not all inside one of
its child calls.  Any call can be a recompute *region* under one of its ``options``
(``Option``: ``memory`` bytes the region holds, its inputs; ``time`` the extra seconds of
its rerun); a region frees every tensor saved inside it.  When a call's children form a
chain (a ``Sequential``'s children, or any calls that each took the one before's output
straight: ``links``), a contiguous run of two or more linked children is a region too,
holding the first one's input (``run_memory``) and rerunning them all (the sum of
``run_time``), or under one of its ``run_options`` (the operator-level ``ops``: it holds
what the option says, the input included); bytes saved by several children of a chain (``spans``: DenseNet's
concatenated features, a residual saved by two layers) are freed by a run that covers all
their savers, and held otherwise.  A plan picks regions that do not overlap; its memory is the sum of the
chosen regions' memory plus the ``keep`` bytes of every call not inside a chosen region,
its time the sum of the chosen regions' time (the additive model of NOTE [ Planner model ]).

What a call's tensors cost is read from the profile (``_planner/profile/calls.py``): a
tensor belongs to the deepest call inside which it was saved every time and taken as an
input of every call that took it, since a region holds its inputs.  That never predicts
less than is held; it predicts more for a region's output that a kept call takes without
saving it (the region's output is then freed, the model holds it as the consumer's input).

The program keeps, per call, the Pareto frontier of (memory, time) over the plans of its
subtree: the call as a region under each option, or its ``keep`` bytes plus a plan of its
children; children combine by min-plus convolution, chains of children by a chain program
whose last piece is a child's plan or a run (a piece ending at child ``j`` is charged
the spans ending inside it that start before it, so every charge is non-negative).
Pruning dominated points loses no optimum, so the answer is exact; points above the
budget are dropped (costs are never negative).
With ``resolution > 0`` a frontier keeps two points per memory bucket of that width (the
least memory and the fastest, memory exact): every budget down to the minimum stays
reachable, plans fit it exactly, optimality may be lost (a point between the two of a
bucket is dropped), and frontiers stay short on large trees.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from .blocks import InfeasibleBudget, Option

__all__ = ["Call", "Pick", "TreeSolution", "solve_tree", "solve_tree_brute_force", "tree_min_memory",
           "tree_plan_cost"]


@dataclass(frozen=True)
class Call:
    """One call of the tree (see NOTE [ Region tree ])."""

    name: str
    keep: float = 0
    options: tuple[Option, ...] = ()
    children: tuple[Call, ...] = ()
    chain: bool = False  # contiguous runs of >= 2 children are regions too
    run_memory: tuple[float, ...] = ()  # per child: what a run starting there holds
    run_time: tuple[float, ...] = ()  # per child: its rerun's seconds
    whole_run: bool = True  # whether the run of all the children is offered
    run_cost: float = 0.0  # seconds a run costs beyond its children's reruns
    # (first child, last child, bytes) saved only by children first..last (first < last):
    # not in ``keep``; freed by a run covering first..last, else held (chains only)
    spans: tuple[tuple[int, int, float], ...] = ()
    # per pair of adjacent children: whether a run may cover both (empty: every pair)
    links: tuple[bool, ...] = ()
    # (first child, last child, options): the run of children first..last under other
    # options than rerunning it whole (``Option.memory`` includes the run's input)
    run_options: tuple[tuple[int, int, tuple[Option, ...]], ...] = ()


@dataclass(frozen=True)
class Pick:
    """A chosen region: call ``name`` under ``option`` (its index), or, when ``span`` is
    set, the run of that call's children ``span[0]..span[1]`` (inclusive), rerun whole
    (``option`` -1) or under that run's ``run_options[option]``."""

    name: str
    option: int = -1
    span: tuple[int, int] | None = None


@dataclass(frozen=True)
class TreeSolution:
    picks: tuple[Pick, ...]
    memory: float
    time: float
    frontier: tuple[tuple[float, float], ...] = field(default=(), compare=False)


def _check(call: Call) -> None:
    for c in _walk(call):
        costs = [c.keep, c.run_cost, *c.run_memory, *c.run_time]
        costs += [x for o in c.options for x in (o.memory, o.time)]
        costs += [x for *_, opts in c.run_options for o in opts for x in (o.memory, o.time)]
        if any(x < 0 or math.isnan(x) for x in costs):
            raise ValueError(f"planner: call {c.name!r} has a negative or NaN cost")
        if c.chain and not (len(c.run_memory) == len(c.run_time) == len(c.children)):
            raise ValueError(f"planner: call {c.name!r} is a chain but its run costs do not match "
                             f"its {len(c.children)} children")
        if c.links and len(c.links) != len(c.children) - 1:
            raise ValueError(f"planner: call {c.name!r} has {len(c.links)} links for "
                             f"{len(c.children)} children")
        if any(not (0 <= lo < hi < len(c.children)) or n < 0 for lo, hi, n in c.spans) or (
                c.spans and not c.chain):
            raise ValueError(f"planner: call {c.name!r} has spans outside its children or is not "
                             "a chain")
        if any(not (0 <= lo < hi < len(c.children)) for lo, hi, _ in c.run_options) or (
                c.run_options and not c.chain):
            raise ValueError(f"planner: call {c.name!r} has run options outside its children or "
                             "is not a chain")


def _walk(call: Call):
    stack = [call]
    while stack:
        c = stack.pop()
        yield c
        stack.extend(c.children)


# A frontier is a list of (memory, time, picks) sorted by memory, times strictly falling;
# picks is a cons tree: None, a Pick, or a pair of cons trees (joined in O(1)).
# NOTE [ Candidates by number ]: combining frontiers makes many candidate points and keeps
# few.  A candidate is first only (memory, time, number), numbered in the order it was
# made; sorting those triples as they are orders ties in (memory, time) by that number, as
# a stable sort by (memory, time) of the made-in-order list would, so the same points
# survive.  Only survivors get their picks (``_decode``).  ``PointCount`` counts both.

PointCount = {"candidates": 0, "kept": 0}


def _prune_numbered(points: list, budget: float, resolution: float) -> list:
    """The surviving (memory, time, number) triples of ``points`` (see ``_prune``)."""
    PointCount["candidates"] += len(points)
    points.sort()
    out: list = []
    for p in points:
        if p[0] > budget:
            break
        if out and p[1] >= out[-1][1]:
            continue
        out.append(p)
    if resolution:
        # per bucket the least memory (so every budget stays reachable) and the fastest
        kept: list = []
        for i, p in enumerate(out):
            bucket = p[0] // resolution
            first = not kept or kept[-1][0] // resolution != bucket
            last = i + 1 == len(out) or out[i + 1][0] // resolution != bucket
            if first or last:
                kept.append(p)
        out = kept
    PointCount["kept"] += len(out)
    return out


def _prune(points: list, budget: float, resolution: float) -> list:
    """``points`` (memory, time, picks) less those above the budget or dominated; ties in
    (memory, time) keep the first made."""
    kept = _prune_numbered([(m, t, i) for i, (m, t, _) in enumerate(points)], budget, resolution)
    return [points[i] for _, _, i in kept]


def _within(frontier: list, extra: float, budget: float) -> int:
    """How many of ``frontier``'s first points (memory rising) have ``m + extra <= budget``."""
    lo, hi = 0, len(frontier)
    while lo < hi:
        mid = (lo + hi) // 2
        if frontier[mid][0] + extra <= budget:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _combine(a: list, b: list, budget: float, resolution: float) -> list:
    nb = len(b)
    cands: list = []
    for ia, (ma, ta, _) in enumerate(a):
        base = ia * nb
        cands += [(ma + b[ib][0], ta + b[ib][1], base + ib) for ib in range(_within(b, ma, budget))]
    return [(m, t, (a[n // nb][2], b[n % nb][2]))
            for m, t, n in _prune_numbered(cands, budget, resolution)]


def _frontier(call: Call, budget: float, resolution: float) -> list:
    kids = [_frontier(c, budget, resolution) for c in call.children]
    inner = _chain(call, kids, budget, resolution) if call.chain else _product(kids, budget, resolution)
    points = [(m + call.keep, t, p) for m, t, p in inner]
    points += [(o.memory, o.time, Pick(call.name, i)) for i, o in enumerate(call.options)]
    return _prune(points, budget, resolution)


def _product(kids: list, budget: float, resolution: float) -> list:
    acc: list = [(0, 0.0, None)]
    for k in kids:
        acc = _combine(acc, k, budget, resolution)
    return acc


def _chain(call: Call, kids: list, budget: float, resolution: float) -> list:
    """Best plans of the first ``j`` children, each child alone or in a run ending at ``j``."""
    best: list[list] = [[(0, 0.0, None)]]
    for j in range(1, len(kids) + 1):
        held = _span_bytes(call, j - 1, j - 1)
        alone = [(m + held, t, p) for m, t, p in _combine(best[j - 1], kids[j - 1], budget, resolution)
                 if m + held <= budget]
        cands = [(m, t, n) for n, (m, t, _) in enumerate(alone)]
        sources = [(0, alone, None)]  # (first number, points, run or None)
        for i in range(j - 1, 0, -1):  # run of children i-1 .. j-1 (0-based), two or more
            if not _linked(call, i - 1):
                break
            if i == 1 and j == len(kids) and not call.whole_run:
                continue
            held = _span_bytes(call, i - 1, j - 1)
            ways = [(call.run_memory[i - 1], sum(call.run_time[i - 1:j]) + call.run_cost, -1)]
            ways += [(o.memory, o.time, k) for k, o in enumerate(_run_options(call, i - 1, j - 1))]
            prev = best[i - 1]
            for memory, seconds, k in ways:
                base = len(cands)
                sources.append((base, prev, (call.name, k, (i - 1, j - 1))))
                cands += [(prev[n][0] + memory + held, prev[n][1] + seconds, base + n)
                          for n in range(_within_run(prev, memory, held, budget))]
        best.append([(m, t, _decode(sources, n)) for m, t, n in _prune_numbered(cands, budget, resolution)])
    return best[-1]


def _within_run(frontier: list, memory: float, held: float, budget: float) -> int:
    """How many of ``frontier``'s first points have ``m + memory + held <= budget`` (summed in
    that order, as the candidates are)."""
    lo, hi = 0, len(frontier)
    while lo < hi:
        mid = (lo + hi) // 2
        if frontier[mid][0] + memory + held <= budget:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _decode(sources: list, n: int):
    """The picks of candidate number ``n`` of ``_chain``'s sources."""
    lo, hi = 0, len(sources)
    while hi - lo > 1:  # the last source whose first number is <= n
        mid = (lo + hi) // 2
        if sources[mid][0] <= n:
            lo = mid
        else:
            hi = mid
    base, points, run = sources[lo]
    if run is None:
        return points[n - base][2]
    name, k, span = run
    return (points[n - base][2], Pick(name, k, span=span))


def _run_options(call: Call, first: int, last: int) -> tuple[Option, ...]:
    return next((opts for lo, hi, opts in call.run_options if (lo, hi) == (first, last)), ())


def _linked(call: Call, i: int) -> bool:
    """Whether a run may cover children ``i`` and ``i + 1``."""
    return not call.links or call.links[i]


def _span_bytes(call: Call, first: int, last: int) -> float:
    """Bytes of the spans a piece over children ``first..last`` leaves held: those ending in it
    and starting before it."""
    return sum(n for lo, hi, n in call.spans if first <= hi <= last and lo < first)


def _flatten(picks) -> tuple[Pick, ...]:
    out, stack = [], [picks]
    while stack:
        p = stack.pop()
        if isinstance(p, Pick):
            out.append(p)
        elif p is not None:
            stack.extend(reversed(p))
    return tuple(out)


def tree_min_memory(root: Call) -> float:
    """The least memory any plan of ``root`` reaches."""
    _check(root)
    return _frontier(root, math.inf, 0)[0][0]


def solve_tree(root: Call, budget: float, *, resolution: float = 0) -> TreeSolution:
    """The plan of least time whose memory is at most ``budget`` (NOTE [ Region tree ]).

    Ties in time go to the smaller memory.  ``frontier`` on the result lists every
    (memory, time) of the root's frontier within the budget.

    Raises:
        InfeasibleBudget: ``budget`` is below :func:`tree_min_memory` (which it names).
        ValueError: a negative or NaN cost, or chain costs that do not match the children.
    """
    _check(root)
    if resolution < 0:
        raise ValueError(f"planner: resolution must be >= 0, got {resolution}")
    points = _frontier(root, budget, resolution)
    if not points:
        raise InfeasibleBudget(budget, tree_min_memory(root))
    memory, seconds, picks = min(points, key=lambda p: (p[1], p[0]))
    return TreeSolution(_flatten(picks), memory, seconds, tuple((m, t) for m, t, _ in points))


def tree_plan_cost(root: Call, picks: Sequence[Pick]) -> tuple[float, float]:
    """(memory, time) of a set of non-overlapping picks under the model of NOTE [ Region tree ]."""
    by_name = {p.name: p for p in picks if p.span is None}
    runs: dict[str, list] = {}
    ways: dict = {}  # (call, span) -> option of the run (-1: rerun whole)
    for p in picks:
        if p.span is not None:
            runs.setdefault(p.name, []).append(p.span)
            ways[(p.name, p.span)] = p.option
    memory = seconds = 0.0
    stack = [root]
    while stack:
        c = stack.pop()
        if c.name in by_name:
            o = c.options[by_name[c.name].option]
            memory, seconds = memory + o.memory, seconds + o.time
            continue
        memory += c.keep
        covered = set()
        for a, b in runs.get(c.name, ()):
            k = ways[(c.name, (a, b))]
            if k >= 0:
                o = _run_options(c, a, b)[k]
                memory, seconds = memory + o.memory, seconds + o.time
            else:
                memory += c.run_memory[a]
                seconds += sum(c.run_time[a:b + 1]) + c.run_cost
            covered.update(range(a, b + 1))
        memory += sum(n for lo, hi, n in c.spans
                      if not any(a <= lo and hi <= b for a, b in runs.get(c.name, ())))
        stack.extend(k for i, k in enumerate(c.children) if i not in covered)
    return memory, seconds


def _all_plans(call: Call):
    """Every set of non-overlapping picks in ``call``'s subtree (exponential: tests only)."""
    for i in range(len(call.options)):
        yield (Pick(call.name, i),)
    yield from _plans_of_children(call, 0)


def _plans_of_children(call: Call, start: int):
    if start == len(call.children):
        yield ()
        return
    for head in _all_plans(call.children[start]):
        for rest in _plans_of_children(call, start + 1):
            yield head + rest
    if call.chain:
        for end in range(start + 1, len(call.children)):
            if not _linked(call, end - 1):
                break
            if start == 0 and end == len(call.children) - 1 and not call.whole_run:
                continue
            for k in range(-1, len(_run_options(call, start, end))):
                for rest in _plans_of_children(call, end + 1):
                    yield (Pick(call.name, k, span=(start, end)),) + rest


def solve_tree_brute_force(root: Call, budget: float) -> TreeSolution:
    """Every plan (reference for tests; exponential).

    Raises:
        InfeasibleBudget: no plan fits ``budget``.
    """
    _check(root)
    costed = [(tree_plan_cost(root, p), p) for p in _all_plans(root)]
    feasible = [(m, t, p) for (m, t), p in costed if m <= budget]
    if not feasible:
        raise InfeasibleBudget(budget, min(m for (m, _), _ in costed))
    m, t, p = min(feasible, key=lambda x: (x[1], x[0]))
    return TreeSolution(tuple(p), m, t)

