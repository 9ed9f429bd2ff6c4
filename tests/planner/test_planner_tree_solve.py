"""The region-tree solver on numbers alone: it equals brute force, reaches every budget between
the minimum and the whole, and names the real minimum when a budget is below it."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paddle_recompute._planner.solvers import tree as tree_solve
from paddle_recompute._planner.solvers.blocks import InfeasibleBudget, Option
from paddle_recompute._planner.solvers.tree import (
    Call,
    Pick,
    solve_tree,
    solve_tree_brute_force,
    tree_min_memory,
    tree_plan_cost,
)

cost = st.integers(min_value=0, max_value=100)
options = st.lists(st.builds(Option, name=st.just("full"), memory=cost, time=cost), max_size=2)


@st.composite
def calls(draw, depth=0, prefix="r"):
    n = 0 if depth >= 3 else draw(st.integers(min_value=0, max_value=3 if depth == 0 else 2))
    kids = tuple(draw(calls(depth + 1, f"{prefix}.{i}")) for i in range(n))
    chain = n >= 2 and draw(st.booleans())
    return Call(prefix, keep=draw(cost), options=tuple(draw(options)), children=kids, chain=chain,
                run_memory=tuple(draw(cost) for _ in kids) if chain else (),
                run_time=tuple(draw(cost) for _ in kids) if chain else (),
                whole_run=draw(st.booleans()), run_cost=draw(cost),
                spans=tuple(draw(st.lists(_span(n), max_size=3))) if chain else (),
                links=tuple(draw(st.lists(st.booleans(), min_size=n - 1, max_size=n - 1)))
                if chain and draw(st.booleans()) else (),
                run_options=tuple(draw(st.lists(_run_option(n), max_size=3))) if chain else ())


def _run_option(n):
    """A run's other options (the operator-level ``ops`` on a run of calls)."""
    span = st.tuples(st.integers(0, n - 2), st.integers(1, n - 1)).filter(lambda s: s[0] < s[1])
    return span.flatmap(lambda s: st.tuples(st.just(s[0]), st.just(s[1]), options.map(tuple)))


def _span(n):
    return st.tuples(st.integers(0, n - 2), st.integers(1, n - 1), cost).filter(lambda s: s[0] < s[1])


@settings(max_examples=150, deadline=None)
@given(root=calls(), slack=st.integers(min_value=0, max_value=400))
def test_exact_equals_brute_force(root, slack):
    budget = tree_min_memory(root) + slack
    fast, brute = solve_tree(root, budget), solve_tree_brute_force(root, budget)
    assert (fast.time, fast.memory) == (brute.time, brute.memory)
    assert tree_plan_cost(root, fast.picks) == (fast.memory, fast.time)  # the picks cost that
    assert fast.memory <= budget


def test_runs_stay_inside_linked_children():
    """Children 0-1 linked, 1-2 not: only the run 0..1 exists, in the solver and the brute force."""
    kids = tuple(_leaf(str(i), 10, 9, 1.0) for i in range(3))
    seq = Call("s", children=kids, chain=True, run_memory=(1, 1, 1), run_time=(1.0, 1.0, 1.0),
               links=(True, False))
    root = Call("", children=(seq,))
    assert {p for plan in tree_solve._all_plans(root) for p in plan if p.span} == {
        Pick("s", span=(0, 1))}
    sol = solve_tree(root, 1 + 9)  # the run of 0..1 and child 2 as its own region
    assert sol.picks == (Pick("s", span=(0, 1)), Pick("2", 0))
    assert solve_tree_brute_force(root, 1 + 9).time == sol.time == 3.0
    with pytest.raises(ValueError, match="links"):
        solve_tree(Call("", children=kids, chain=True, run_memory=(1, 1, 1),
                        run_time=(1.0, 1.0, 1.0), links=(True,)), 10)


@settings(max_examples=100, deadline=None)
@given(root=calls(), resolution=st.integers(min_value=1, max_value=50),
       slack=st.integers(min_value=0, max_value=400))
def test_resolution_fits_the_budget_exactly(root, resolution, slack):
    budget = tree_min_memory(root) + slack
    sol = solve_tree(root, budget, resolution=resolution)
    assert tree_plan_cost(root, sol.picks) == (sol.memory, sol.time)
    assert sol.memory <= budget
    assert sol.time >= solve_tree_brute_force(root, budget).time


@settings(max_examples=100, deadline=None)
@given(root=calls())
def test_below_the_minimum_names_it(root):
    least = tree_min_memory(root)
    if least == 0:
        return
    with pytest.raises(InfeasibleBudget) as info:
        solve_tree(root, least - 1)
    assert info.value.minimum == least
    assert solve_tree(root, least).memory == least


def _leaf(name, keep, full_memory, full_time):
    return Call(name, keep=keep, options=(Option("full", full_memory, full_time),))


def test_fine_steps_on_a_chain_of_leaves():
    """32 layers of 10 bytes, each recomputable for 1 byte: every budget from the minimum
    up is reached to within one layer's step, and time only grows as the budget shrinks."""
    root = Call("", children=tuple(_leaf(str(i), 10, 1, 1.0) for i in range(32)))
    assert tree_min_memory(root) == 32
    previous = -1.0
    for budget in range(320, 31, -1):
        sol = solve_tree(root, budget)
        assert budget - 9 <= sol.memory <= budget
        assert sol.time >= previous
        previous = sol.time


def test_a_run_holds_one_input():
    """A Sequential of three leaves: the run of all three holds only the first input, so
    below what three separate regions hold, the run is the answer."""
    kids = tuple(_leaf(str(i), 10, 4, 1.0) for i in range(3))
    seq = Call("s", children=kids, chain=True, run_memory=(4, 4, 4), run_time=(1.0, 1.0, 1.0))
    sol = solve_tree(Call("", children=(seq,)), 5)
    assert sol.picks == (Pick("s", span=(0, 2)),)
    assert (sol.memory, sol.time) == (4, 3.0)


def test_a_run_frees_what_its_children_share():
    """Bytes saved by children 0 and 2 only (DenseNet's features): a run over 0..2 frees
    them, regions over each child do not."""
    kids = tuple(_leaf(str(i), 10, 1, 1.0) for i in range(3))
    seq = Call("s", children=kids, chain=True, run_memory=(1, 1, 1), run_time=(1.0, 1.0, 1.0),
               spans=((0, 2, 50),))
    root = Call("", children=(seq,))
    assert tree_min_memory(root) == 1
    assert solve_tree(root, 1).picks == (Pick("s", span=(0, 2)),)
    one = solve_tree(root, 75)  # one child as a region: the span stays held
    assert (len(one.picks), one.picks[0].span, one.memory) == (1, None, 10 + 10 + 1 + 50)


def test_bad_costs_rejected():
    with pytest.raises(ValueError, match="negative or NaN"):
        solve_tree(Call("", keep=-1), 10)
    with pytest.raises(ValueError, match="run costs"):
        solve_tree(Call("", children=(Call("a"), Call("b")), chain=True), 10)


def test_a_bucket_keeps_its_fastest_point():
    """Resolution 15: (0 B, 6 s) and (10 B, 1 s) share a bucket; the faster one stays."""
    root = Call("", children=(_leaf("a", 10, 0, 5.0), _leaf("b", 10, 0, 1.0)))
    assert solve_tree(root, 12, resolution=15).time == 1.0


def test_a_run_option_beside_rerunning_the_run_whole():
    """A run's other option (``ops`` on a run) is picked where it beats rerunning the run
    whole within the budget, and costs what it says; with more room, nothing is picked."""
    kids = tuple(_leaf(str(i), 10, 9, 1.0) for i in range(3))
    seq = Call("s", children=kids, chain=True, run_memory=(1, 1, 1), run_time=(5.0, 5.0, 5.0),
               run_options=((0, 2, (Option("ops:0", 4, 3.0), Option("ops:1", 12, 1.0))),))
    root = Call("", children=(seq,))
    sol = solve_tree(root, 4)
    assert sol.picks == (Pick("s", 0, span=(0, 2)),) and (sol.memory, sol.time) == (4, 3.0)
    assert tree_plan_cost(root, sol.picks) == (4, 3.0)
    assert solve_tree(root, 1).picks == (Pick("s", span=(0, 2)),)  # only the whole rerun fits
    assert solve_tree(root, 30).picks == ()
    brute = solve_tree_brute_force(root, 4)
    assert (brute.memory, brute.time) == (4, 3.0)


# The solver before NOTE [ Candidates by number ] (each candidate built with its picks, then
# pruned), kept verbatim as the reference its picks must equal.

def _old_prune(points: list, budget: float, resolution: float) -> list:
    points.sort(key=lambda p: (p[0], p[1]))
    out: list = []
    for p in points:
        if p[0] > budget:
            break
        if out and p[1] >= out[-1][1]:
            continue
        out.append(p)
    if not resolution:
        return out
    # per bucket the least memory (so every budget stays reachable) and the fastest
    kept: list = []
    for i, p in enumerate(out):
        bucket = p[0] // resolution
        first = not kept or kept[-1][0] // resolution != bucket
        last = i + 1 == len(out) or out[i + 1][0] // resolution != bucket
        if first or last:
            kept.append(p)
    return kept


def _old_combine(a: list, b: list, budget: float, resolution: float) -> list:
    return _old_prune([(ma + mb, ta + tb, (pa, pb)) for ma, ta, pa in a for mb, tb, pb in b
                   if ma + mb <= budget], budget, resolution)


def _old_frontier(call: Call, budget: float, resolution: float) -> list:
    kids = [_old_frontier(c, budget, resolution) for c in call.children]
    inner = (_old_chain(call, kids, budget, resolution) if call.chain
             else _old_product(kids, budget, resolution))
    points = [(m + call.keep, t, p) for m, t, p in inner]
    points += [(o.memory, o.time, Pick(call.name, i)) for i, o in enumerate(call.options)]
    return _old_prune(points, budget, resolution)


def _old_product(kids: list, budget: float, resolution: float) -> list:
    acc: list = [(0, 0.0, None)]
    for k in kids:
        acc = _old_combine(acc, k, budget, resolution)
    return acc


def _old_chain(call: Call, kids: list, budget: float, resolution: float) -> list:
    """Best plans of the first ``j`` children, each child alone or in a run ending at ``j``."""
    best: list[list] = [[(0, 0.0, None)]]
    for j in range(1, len(kids) + 1):
        held = tree_solve._span_bytes(call, j - 1, j - 1)
        points = [(m + held, t, p) for m, t, p in _old_combine(best[j - 1], kids[j - 1], budget, resolution)
                  if m + held <= budget]
        for i in range(j - 1, 0, -1):  # run of children i-1 .. j-1 (0-based), two or more
            if not tree_solve._linked(call, i - 1):
                break
            if i == 1 and j == len(kids) and not call.whole_run:
                continue
            held = tree_solve._span_bytes(call, i - 1, j - 1)
            ways = [(call.run_memory[i - 1], sum(call.run_time[i - 1:j]) + call.run_cost, -1)]
            ways += [(o.memory, o.time, k) for k, o in enumerate(tree_solve._run_options(call, i - 1, j - 1))]
            for memory, seconds, k in ways:
                run = Pick(call.name, k, span=(i - 1, j - 1))
                points += [(m + memory + held, t + seconds, (p, run)) for m, t, p in best[i - 1]
                           if m + memory + held <= budget]
        best.append(_old_prune(points, budget, resolution))
    return best[-1]


float_cost = st.floats(min_value=0, max_value=100, allow_nan=False, allow_subnormal=False)


@settings(max_examples=200, deadline=None)
@given(root=calls(), slack=st.integers(min_value=0, max_value=400),
       resolution=st.sampled_from([0, 1, 7, 30]))
def test_picks_equal_building_every_candidate(root, slack, resolution):
    """Same frontier, same picks (ties included) as building every candidate's picks first."""
    budget = tree_min_memory(root) + slack
    new = tree_solve._frontier(root, budget, resolution)
    old = _old_frontier(root, budget, resolution)
    assert [(m, t, tree_solve._flatten(p)) for m, t, p in new] == \
        [(m, t, tree_solve._flatten(p)) for m, t, p in old]


@settings(max_examples=100, deadline=None)
@given(root=calls(), scale=float_cost, slack=float_cost)
def test_picks_equal_building_every_candidate_on_float_costs(root, scale, slack):
    """Float sums round: the cut at the budget must still match, candidate by candidate."""
    root = _scaled(root, scale / 7 + 0.1)
    budget = tree_min_memory(root) + slack
    new = tree_solve._frontier(root, budget, 0)
    old = _old_frontier(root, budget, 0)
    assert [(m, t, tree_solve._flatten(p)) for m, t, p in new] == \
        [(m, t, tree_solve._flatten(p)) for m, t, p in old]


def _scaled(call: Call, k: float) -> Call:
    def opts(os):
        return tuple(Option(o.name, o.memory * k, o.time * k / 3) for o in os)
    return Call(call.name, call.keep * k, opts(call.options), tuple(_scaled(c, k) for c in call.children),
                call.chain, tuple(m * k for m in call.run_memory), tuple(t * k / 3 for t in call.run_time),
                call.whole_run, call.run_cost * k / 3, tuple((a, b, n * k) for a, b, n in call.spans),
                call.links, tuple((a, b, opts(os)) for a, b, os in call.run_options))


def test_only_surviving_points_get_picks():
    """A chain of 12 leaves makes over twice as many candidate points as it keeps; only
    those kept are built with their picks (counted, not timed)."""
    leaves = tuple(_leaf(f"r.{i}", 10 + i, 1 + i % 3, 5 + i) for i in range(12))
    root = Call("r", children=leaves, chain=True, run_memory=(1,) * 12, run_time=(5,) * 12)
    tree_solve.PointCount.update(candidates=0, kept=0)
    solve_tree(root, 10 ** 6)
    made, kept = tree_solve.PointCount["candidates"], tree_solve.PointCount["kept"]
    assert made > 2 * kept > 0
