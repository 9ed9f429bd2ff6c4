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
