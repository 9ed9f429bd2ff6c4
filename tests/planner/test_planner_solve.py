"""The planner's solvers on numbers alone: exact ones equal brute force; heuristics never beat them."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paddle_recompute._planner.solvers.blocks import (
    BLOCK_SOLVERS,
    InfeasibleBudget,
    Option,
    min_memory,
    solve_brute_force,
    solve_exact,
    solve_greedy,
)
from paddle_recompute._planner.solvers.segments import (
    SEGMENT_SOLVERS,
    Stage,
    brute_force_segments,
    segmentation_cost,
    solve_segments,
    sqrt_segments,
)

# integer costs: sums are exact, so "optimal" can be compared with ==
cost = st.integers(min_value=0, max_value=1000)
option = st.builds(Option, name=st.sampled_from(["keep", "full", "policy:a", "policy:b"]),
                   memory=cost, time=cost)
blocks_st = st.lists(st.lists(option, min_size=1, max_size=4), min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(blocks=blocks_st, slack=st.integers(min_value=0, max_value=3000))
def test_exact_equals_brute_force(blocks, slack):
    budget = min_memory(blocks) + slack
    exact, brute = solve_exact(blocks, budget), solve_brute_force(blocks, budget)
    assert exact == brute
    assert exact.memory <= budget


@settings(max_examples=200, deadline=None)
@given(blocks=blocks_st, slack=st.integers(min_value=0, max_value=3000))
def test_greedy_fits_but_is_never_better(blocks, slack):
    budget = min_memory(blocks) + slack
    greedy = solve_greedy(blocks, budget)
    assert greedy.memory <= budget
    assert greedy.time >= solve_exact(blocks, budget).time


@settings(max_examples=100, deadline=None)
@given(blocks=blocks_st, slack=st.integers(min_value=0, max_value=3000),
       resolution=st.integers(min_value=1, max_value=300))
def test_resolution_stays_within_budget(blocks, slack, resolution):
    budget = min_memory(blocks) + slack
    try:
        coarse = solve_exact(blocks, budget, resolution=resolution)
    except InfeasibleBudget:
        return  # rounding memories up can make a tight budget infeasible: allowed
    assert coarse.memory <= budget
    assert coarse.time >= solve_exact(blocks, budget).time


@pytest.mark.parametrize("name", sorted(BLOCK_SOLVERS))
def test_infeasible_budget_names_minimum(name):
    blocks = [[Option("keep", 10, 0), Option("full", 4, 3)]] * 3
    with pytest.raises(InfeasibleBudget, match="minimum achievable activation memory 12") as info:
        BLOCK_SOLVERS[name](blocks, 11)
    assert info.value.minimum == 12


def test_extra_policy_options_are_used_when_they_pay():
    # a policy option that keeps half the memory for a tenth of the time wins everywhere
    block = [Option("keep", 100, 0), Option("full", 10, 50), Option("policy:save_matmuls", 50, 5)]
    sol = solve_exact([block] * 4, 200)
    assert sol.choice == (2, 2, 2, 2) and sol.memory == 200 and sol.time == 20
    # a tighter budget mixes full and policy choices
    sol = solve_exact([block] * 4, 120)
    assert sorted(sol.choice) == [1, 1, 2, 2] and (sol.memory, sol.time) == (120, 110)
    sol = solve_exact([block] * 4, 119)
    assert sorted(sol.choice) == [1, 1, 1, 2] and (sol.memory, sol.time) == (80, 155)


def test_bad_costs_rejected():
    with pytest.raises(ValueError, match="block 1 has no options"):
        solve_exact([[Option("keep", 1, 0)], []], 10)
    with pytest.raises(ValueError, match="negative or NaN"):
        solve_exact([[Option("keep", -1, 0)]], 10)
    with pytest.raises(ValueError, match="negative or NaN"):
        solve_exact([[Option("keep", 1, math.nan)]], 10)


stage = st.builds(Stage, saved=cost, output=st.integers(min_value=0, max_value=200), time=cost)
chain = st.lists(stage, min_size=1, max_size=8)


def _same(a, b):
    return (a.peak, a.time) == (b.peak, b.time)


@settings(max_examples=300, deadline=None)
@given(stages=chain)
def test_segments_min_peak_equals_brute_force(stages):
    assert _same(solve_segments(stages), brute_force_segments(stages))


@settings(max_examples=300, deadline=None)
@given(stages=chain, frac=st.floats(min_value=0.0, max_value=1.2))
def test_segments_under_budget_equals_brute_force(stages, frac):
    lowest = brute_force_segments(stages).peak
    total = sum(s.saved for s in stages)
    budget = lowest + frac * max(total - lowest, 0)
    got, want = solve_segments(stages, budget), brute_force_segments(stages, budget)
    assert _same(got, want) and got.peak <= budget
    assert got == segmentation_cost(stages, got.starts)  # reported cost is the model's cost


def test_uniform_chain_follows_sqrt_rule():
    # 16 equal stages whose outputs cost as much as their activations: sqrt(16) = 4 segments
    stages = [Stage(saved=10, output=10, time=1)] * 16
    best = solve_segments(stages)
    assert len(best.starts) == 4 and best.peak == 3 * 10 + 40
    assert _same(best, sqrt_segments(stages))


@pytest.mark.parametrize("name", sorted(SEGMENT_SOLVERS))
def test_segment_solvers_share_signature_and_errors(name):
    stages = [Stage(10, 1, 1)] * 4
    assert SEGMENT_SOLVERS[name](stages, None).peak <= 40
    with pytest.raises(InfeasibleBudget, match="peak memory"):
        SEGMENT_SOLVERS[name](stages, 5)


def test_no_budget_without_recompute_costs_nothing():
    stages = [Stage(10, 1, 1)] * 3
    got = solve_segments(stages, 30)
    assert got.starts == (0,) and got.time == 0


def test_exact_keeps_back_pointers_not_choices():
    """NOTE [ Choices by back-pointer ]: candidates are numbers until pruned; most are dropped
    (counted, not timed), and the choice equals brute force's, ties included."""
    from paddle_recompute._planner.solvers import blocks as block_solve

    blocks = [[Option("keep", 10, 0), Option("full", 2, 3), Option("policy:a", 6, 1),
               Option("policy:b", 6, 1)] for _ in range(7)]
    block_solve.PointCount.update(candidates=0, kept=0)
    exact = solve_exact(blocks, 40)
    assert block_solve.PointCount["candidates"] > 2 * block_solve.PointCount["kept"] > 0
    assert exact == solve_brute_force(blocks, 40)
