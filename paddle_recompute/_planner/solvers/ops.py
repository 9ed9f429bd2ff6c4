"""Which operator outputs a region keeps, recomputes or offloads: pure Python, no framework.

NOTE [ Operator model ]: a region (one call of a block) runs operators ``0..n-1`` in order.
Operator ``j`` takes ``time`` seconds and makes ``nbytes`` bytes of outputs; ``fixed``
seconds around it (the Python that leads to it) are paid by any rerun that passes it, even
one that skips the operator.  Backward needs
some tensors (``Slot``): each was made by a ``producer`` operator (``None``: a region input
or a parameter, held anyway) and saved by a ``consumer`` operator.  A plan puts each
operator in one of three sets: kept ``K`` (its outputs stay on the device), offloaded ``O``
(they go to the host and come back: ``offload_time`` seconds, no device bytes) or neither.

A slot is *covered* when its producer is ``None`` or it or one of its ``aliases`` (views of the
same buffer) is in ``K ∪ O``.  The rerun of a region is
the forward replayed from its start (NOTE [ Selective recompute ] in
``_selective/frame.py``): it stops at the last slot not covered, and on its way runs every
operator except the kept or offloaded ones it can skip (``skippable``: not in-place; random
ones only with RNG state preserved).  The last uncovered slot's *reach* is its consumer, plus
one when the consumer itself made the tensor (its own output or an internal result, so it
must run); the rerun runs the operators before the largest reach ``L``.  So

    memory = sum(nbytes of K)
    time   = sum(fixed of j < L) + sum(time of j < L not skipped) + sum(offload_time of O)

A tensor's rebuild cost therefore includes the operators it depends on that are not kept,
and more: everything before it that is not kept (the rerun cannot tell which Python values
later code reads, so it reruns the prefix).

Exact solver: for a fixed ``L`` the operators a slot past ``L`` needs must be in
``K ∪ O``; every other operator before ``L`` can be kept (saves its time, costs its bytes),
offloaded (saves its time, costs the copy) or rerun; operators from ``L`` on gain nothing.
That is a multiple-choice knapsack per ``L``, solved by a dynamic programme over Pareto
frontiers (as ``solve.solve_exact``); the union over the ``L`` values that occur, pruned,
is the region's exact (memory, time) frontier.  An assignment with stop ``L`` appears in
the programme for ``L`` at its true cost, and every programme point costs at least what
its assignment does, so each point is re-evaluated with :func:`evaluate`.

Approximation: a frontier longer than ``max_points`` is thinned, after each operator, to the
fastest point in each of ``max_points`` equal memory buckets (and the least memory one).
Points keep their true costs (a plan never exceeds its budget); optimality is then up to
one bucket's width of budget.  ``max_points`` is lowered for large graphs so that the work
(stop points x operators x frontier points) stays under ``MAX_WORK`` (a decoder layer of 62
operators and 44 saved tensors: 757 points, exact, under a second).
``Frontier.exact`` says whether that happened.

NOTE [ Ancestor model ]: a region's rerun leaves out the operators no needed tensor depends
on (NOTE [ Dead operators ] in ``_selective/liveness.py``).  A graph recorded with each
operator's input makers (``Op.inputs``: the operators whose outputs it takes; ``None``: an
input of unknown origin, so it depends on every operator before it) and the operators that
must run when passed (``Op.forced``: in-place, read by Python, data-dependent shapes...) has
``OpGraph.ancestors`` set, and is priced as that rerun runs: it still passes the operators
before ``L`` (their ``fixed`` seconds), but runs only the *live* ones: the maker of each
slot not covered, the forced ones, and, from the last back, the makers of the inputs of
every live operator it runs (a kept, skippable one is replayed and needs no inputs).

    time = sum(fixed of j < L) + sum(time of live j < L not skipped) + sum(offload_time of O)

An operator's cost now depends on which later ones run, so the choices no longer separate:
the exact budgeted optimum is an integer programme (as Checkmate's), solved by
``scipy.optimize.milp`` (HiGHS): per operator binaries kept ``h``, offloaded ``o``, runs ``r``,
passed ``z``; ``z`` falls along the operators; an uncovered slot makes its maker run (or its
consumer, for its own output) and the rerun pass its reach; a running operator makes each
input's maker run or, if skippable, be held; forced passed operators run unless replayed; kept bytes fit
the budget; minimise ``sum(fixed z) + sum(time r) + sum(offload_time o)``.  Every feasible
point costs at least what its assignment does and the assignment's own cost is feasible, so
the optimum is exact (:func:`solve_ops`; tested against brute force).  The frontier of such
a graph is the programme's optimum at ``GRID`` budgets spread over its memory range plus the
prefix model's exact frontier, re-priced: exact at those budgets (``Frontier.exact`` False).
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass

import numpy as np

__all__ = ["Op", "Slot", "OpGraph", "Assignment", "Frontier", "evaluate", "op_frontier",
           "solve_ops", "solve_ops_brute_force", "live_ops", "MAX_POINTS", "MAX_WORK", "GRID"]

MAX_POINTS = 4096
MAX_WORK = 20_000_000
GRID = 24


@dataclass(frozen=True)
class Op:
    """One operator call: ``time`` seconds, ``nbytes`` output bytes; ``offload_time``
    seconds for a host round trip of its outputs (``None``: not offloadable); ``fixed``
    seconds paid before it by any rerun that passes it; ``inputs``: the operators whose
    outputs it takes (``None``: unknown, every operator before it); ``forced``: runs whenever
    a rerun passes it (NOTE [ Ancestor model ]; both only used by an ``ancestors`` graph)."""

    name: str
    time: float
    nbytes: int
    skippable: bool = True
    offload_time: float | None = None
    fixed: float = 0.0
    inputs: tuple[int, ...] | None = None
    forced: bool = False


@dataclass(frozen=True)
class Slot:
    """A tensor backward needs: made by op ``producer`` (``None``: held anyway), saved by op
    ``consumer``; ``aliases``: other operators (not after ``consumer``) whose outputs share its
    buffer (views), any of which held covers it too, as the frame matches kept buffers by
    address."""

    producer: int | None
    consumer: int
    aliases: tuple[int, ...] = ()

    def covered(self, held) -> bool:
        return self.producer is None or self.producer in held or any(a in held for a in self.aliases)

    @property
    def reach(self) -> int:
        return self.consumer + (1 if self.producer == self.consumer else 0)


@dataclass(frozen=True)
class OpGraph:
    """The operators of one region and the slots backward needs; see NOTE [ Operator model ]."""

    ops: tuple[Op, ...]
    slots: tuple[Slot, ...]
    ancestors: bool = False

    def __post_init__(self):
        n = len(self.ops)
        for j, o in enumerate(self.ops):
            if o.inputs is not None and any(not 0 <= p < j for p in o.inputs):
                raise ValueError(f"op graph: operator {j} ({o.name!r}) takes inputs {o.inputs} "
                                 "not made before it")
        for s in self.slots:
            if (not 0 <= s.consumer < n or not (s.producer is None or 0 <= s.producer <= s.consumer)
                    or any(not 0 <= a <= s.consumer for a in s.aliases)):
                raise ValueError(f"op graph: slot {s} refers to operators outside 0..{n - 1} "
                                 "or is made after it is saved")
        for o in self.ops:
            if min(o.time, o.nbytes, o.fixed, o.offload_time or 0) < 0:
                raise ValueError(f"op graph: operator {o.name!r} has a negative cost")


@dataclass(frozen=True)
class Assignment:
    """Kept and offloaded operator positions, with the memory and time they cost."""

    memory: int
    time: float
    keep: frozenset[int]
    offload: frozenset[int]


@dataclass(frozen=True)
class Frontier:
    """Every assignment no other beats in both memory and time, by memory ascending."""

    points: tuple[Assignment, ...]
    exact: bool

    def best(self, budget: float) -> Assignment | None:
        """The fastest point holding at most ``budget`` bytes (None: none fits)."""
        fits = [p for p in self.points if p.memory <= budget]
        return min(fits, key=lambda p: (p.time, p.memory)) if fits else None


def evaluate(graph: OpGraph, keep, offload=()) -> Assignment:
    """The cost of keeping ``keep`` and offloading ``offload`` (NOTE [ Operator model ])."""
    keep, offload = frozenset(keep), frozenset(offload)
    if keep & offload:
        raise ValueError(f"op graph: operators {sorted(keep & offload)} both kept and offloaded")
    held = keep | offload
    stop = max((s.reach for s in graph.slots if not s.covered(held)), default=0)
    if graph.ancestors:
        live = live_ops(graph, held, stop)
        time = sum(o.fixed + (o.time if j in live else 0) for j, o in enumerate(graph.ops[:stop]))
    else:
        time = sum(o.fixed + (0 if o.skippable and j in held else o.time)
                   for j, o in enumerate(graph.ops[:stop]))
    for j in offload:
        if graph.ops[j].offload_time is None:
            raise ValueError(f"op graph: operator {j} ({graph.ops[j].name!r}) cannot be offloaded")
        time += graph.ops[j].offload_time
    return Assignment(sum(graph.ops[j].nbytes for j in keep), time, keep, offload)


def live_ops(graph: OpGraph, held: frozenset, stop: int) -> set:
    """The operators before ``stop`` a rerun runs (NOTE [ Ancestor model ])."""
    ops = graph.ops
    live = {s.producer for s in graph.slots if not s.covered(held)}
    live.update(j for j in range(stop) if ops[j].forced)
    for j in range(stop - 1, -1, -1):
        if j not in live:
            continue
        if ops[j].skippable and j in held:
            live.discard(j)  # replayed from its kept outputs
            continue
        if ops[j].inputs is None:
            live.update(p for p in range(j) if not (ops[p].skippable and p in held))
        else:
            live.update(ops[j].inputs)
    return live


def _choices(op: Op, j: int, stop: int, required: bool):
    """(memory, time, code) per way to run ``op`` under stop ``stop``; code 0 rerun, 1 keep,
    2 offload."""
    passed = j < stop
    saves = passed and op.skippable
    fixed = op.fixed if passed else 0.0
    out = [] if required else [(0, fixed + (op.time if passed else 0.0), 0)]
    if required or saves:
        rest = fixed + (0.0 if saves or not passed else op.time)
        out.append((op.nbytes, rest, 1))
        if op.offload_time is not None:
            out.append((0, op.offload_time + rest, 2))
    return out


def _pareto(points: list) -> list:
    points.sort(key=lambda p: (p[0], p[1]))
    out: list = []
    for p in points:
        if not out or p[1] < out[-1][1]:
            out.append(p)
    return out


def _thin(points: list, max_points: int) -> list:
    lo, hi = points[0][0], points[-1][0]
    width = (hi - lo) / max_points or 1
    buckets: dict = {-1: points[0]}  # the least memory stays reachable
    for p in points[1:]:
        b = int((p[0] - lo) / width)
        if b not in buckets or p[1] < buckets[b][1]:
            buckets[b] = p
    return _pareto(list(buckets.values()))


def _frontier_for_stop(graph: OpGraph, stop: int, max_points: int) -> tuple[list, bool]:
    required = {s.producer for s in graph.slots if s.producer is not None and s.reach > stop}
    frontier: list = [(0, 0.0, ())]  # (memory, time, ((op, code), ...))
    exact = True
    for j, op in enumerate(graph.ops):
        choices = _choices(op, j, stop, j in required)
        if len(choices) == 1 and choices[0][2] == 0:
            frontier = [(m, t + choices[0][1], c) for m, t, c in frontier]
            continue
        frontier = _pareto([(m + cm, t + ct, c + ((j, code),) if code else c)
                            for m, t, c in frontier for cm, ct, code in choices])
        if len(frontier) > max_points:
            frontier, exact = _thin(frontier, max_points), False
    return frontier, exact


def op_frontier(graph: OpGraph, max_points: int = MAX_POINTS) -> Frontier:
    """The exact (memory, time) frontier of a region's assignments (thinned past
    ``max_points``; see NOTE [ Operator model ]); of an ``ancestors`` graph, exact at ``GRID``
    budgets (NOTE [ Ancestor model ])."""
    if graph.ancestors:
        return _ancestor_frontier(graph, max_points)
    stops = sorted({0} | {s.reach for s in graph.slots if s.producer is not None})
    exact = not any(s.aliases for s in graph.slots)  # the programme asks for the producer itself
    max_points = min(max_points, max(64, MAX_WORK // (len(stops) * max(len(graph.ops), 1))))
    found: list = []
    for stop in stops:
        points, ok = _frontier_for_stop(graph, stop, max_points)
        exact = exact and ok
        for _m, _t, codes in points:
            keep = [j for j, code in codes if code == 1]
            off = [j for j, code in codes if code == 2]
            a = evaluate(graph, keep, off)
            found.append((a.memory, a.time, (sorted(keep), sorted(off)), a))
    pruned = _pareto([(m, t, k, a) for m, t, k, a in found])
    return Frontier(tuple(p[3] for p in pruned), exact)


def _ancestor_frontier(graph: OpGraph, max_points: int) -> Frontier:
    prefix = op_frontier(dataclasses.replace(graph, ancestors=False), max_points)
    found = [_pruned(graph, evaluate(graph, p.keep, p.offload)) for p in prefix.points]
    top = sum(o.nbytes for o in graph.ops)
    for k in range(GRID + 1):
        a = _milp(graph, top * k / GRID)
        if a is not None:
            found.append(a)
    pruned = _pareto([(a.memory, a.time, (sorted(a.keep), sorted(a.offload)), a) for a in found])
    return Frontier(tuple(p[3] for p in pruned), False)


def _pruned(graph: OpGraph, a: Assignment) -> Assignment:
    """``a`` without the kept operators whose outputs no longer save any time."""
    for j in sorted(a.keep, key=lambda j: -graph.ops[j].nbytes):
        b = evaluate(graph, a.keep - {j}, a.offload)
        if b.time <= a.time:
            a = b
    return a


def _milp(graph: OpGraph, budget: float) -> Assignment | None:
    """The exact optimum of an ``ancestors`` graph within ``budget`` (NOTE [ Ancestor model ]);
    None when the solver gives no optimum."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    ops, n = graph.ops, len(graph.ops)
    if n == 0:
        return evaluate(graph, ())
    h, o, r, z = (lambda j: j), (lambda j: n + j), (lambda j: 2 * n + j), (lambda j: 3 * n + j)
    rows: list = []  # (coefficients {var: c}, lower bound); every row is sum >= lower

    def held(p):
        return {h(p): 1, o(p): 1} if ops[p].skippable else {}

    for j in range(n):
        rows.append(({h(j): -1, o(j): -1}, -1))
        rows.append(({z(j): 1, r(j): -1}, 0))
        if j + 1 < n:
            rows.append(({z(j): 1, z(j + 1): -1}, 0))
        if ops[j].forced:
            rows.append(({r(j): 1, **held(j), z(j): -1}, 0))
        for p in (range(j) if ops[j].inputs is None else set(ops[j].inputs)):
            rows.append(({r(p): 1, **held(p), r(j): -1}, 0))
    for s in graph.slots:
        if s.producer is None:
            continue
        cover = {}
        for p in (s.producer, *s.aliases):
            cover.update({h(p): 1, o(p): 1})
        rows.append(({r(s.producer): 1, **cover}, 1))
        rows.append(({z(s.reach - 1): 1, **cover}, 1))
    a = np.zeros((len(rows) + 1, 4 * n))
    lower = np.empty(len(rows) + 1)
    for i, (coefs, lb) in enumerate(rows):
        for var, c in coefs.items():
            a[i, var] += c
        lower[i] = lb
    a[-1, :n] = [-op.nbytes for op in ops]
    lower[-1] = -budget
    cost = np.array([0.0] * n + [op.offload_time or 0.0 for op in ops] + [op.time for op in ops]
                    + [op.fixed for op in ops])
    upper = np.ones(4 * n)
    upper[n:2 * n] = [0 if op.offload_time is None else 1 for op in ops]
    res = milp(cost, constraints=LinearConstraint(a, lower, np.inf), integrality=np.ones(4 * n),
               bounds=Bounds(0, upper), options={"time_limit": 10})
    if res.status != 0 or res.x is None:
        return None
    x = np.round(res.x).astype(int)
    keep = [j for j in range(n) if x[h(j)]]
    off = [j for j in range(n) if x[o(j)]]
    return _pruned(graph, evaluate(graph, keep, off))


def solve_ops(graph: OpGraph, budget: float, max_points: int = MAX_POINTS) -> Assignment:
    """The fastest assignment within ``budget`` bytes (keeping nothing holds 0 bytes, so
    any ``budget >= 0`` fits); of an ``ancestors`` graph, by the integer programme of
    NOTE [ Ancestor model ] (the frontier's best where it gives no optimum).

    Raises:
        ValueError: ``budget`` is negative.
    """
    if graph.ancestors and budget >= 0:
        a = _milp(graph, budget)
        if a is not None:
            return a
    best = op_frontier(graph, max_points).best(budget)
    if best is None:
        raise ValueError(f"op graph: no assignment fits {budget} bytes")
    return best


def solve_ops_brute_force(graph: OpGraph, budget: float) -> Assignment:
    """Every assignment (3^n; reference for tests)."""
    best = None
    n = len(graph.ops)
    for codes in itertools.product(*(range(3 if o.offload_time is not None else 2)
                                     for o in graph.ops)):
        a = evaluate(graph, [j for j in range(n) if codes[j] == 1],
                     [j for j in range(n) if codes[j] == 2])
        if a.memory <= budget and (best is None or (a.time, a.memory) < (best.time, best.memory)):
            best = a
    if best is None:
        raise ValueError(f"op graph: no assignment fits {budget} bytes")
    return best

