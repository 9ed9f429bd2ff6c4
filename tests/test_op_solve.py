"""The operator-level solver on numbers alone: its frontier equals brute force on small graphs."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paddle_recompute._planner.op_solve import (
    Op,
    OpGraph,
    Slot,
    evaluate,
    op_frontier,
    solve_ops,
    solve_ops_brute_force,
)

cost = st.integers(min_value=0, max_value=50)


@st.composite
def graphs(draw, offload=True):
    n = draw(st.integers(min_value=1, max_value=6))
    ops = tuple(Op(f"op{j}", draw(cost), draw(cost), draw(st.booleans()),
                   draw(st.one_of(st.none(), cost)) if offload else None,
                   draw(st.integers(min_value=0, max_value=5))) for j in range(n))
    slots = []
    for _ in range(draw(st.integers(min_value=0, max_value=6))):
        consumer = draw(st.integers(min_value=0, max_value=n - 1))
        producer = draw(st.one_of(st.none(), st.integers(min_value=0, max_value=consumer)))
        slots.append(Slot(producer, consumer))
    return OpGraph(ops, tuple(slots))


@settings(max_examples=300, deadline=None)
@given(graph=graphs(), budget=st.integers(min_value=0, max_value=300))
def test_exact_equals_brute_force(graph, budget):
    exact, brute = solve_ops(graph, budget), solve_ops_brute_force(graph, budget)
    assert exact.time == brute.time
    assert exact.memory <= budget
    assert evaluate(graph, exact.keep, exact.offload) == exact  # costs are the model's own


@settings(max_examples=100, deadline=None)
@given(graph=graphs(offload=False))
def test_frontier_is_pareto_and_exact(graph):
    front = op_frontier(graph)
    assert front.exact
    for a, b in zip(front.points, front.points[1:], strict=False):
        assert a.memory < b.memory and a.time > b.time
    assert front.points[0].memory == 0  # recomputing everything always fits


@settings(max_examples=100, deadline=None)
@given(graph=graphs(), budget=st.integers(min_value=0, max_value=300))
def test_thinned_frontier_stays_within_budget(graph, budget):
    thin = op_frontier(graph, max_points=2)
    best = thin.best(budget)
    assert best.memory <= budget
    assert best.time >= solve_ops_brute_force(graph, budget).time


def test_rebuild_cost_includes_unkept_ancestors():
    # a -> b -> c, backward needs c (saved by the last op)
    ops = (Op("a", 5, 10), Op("b", 3, 10), Op("c", 1, 10), Op("use", 1, 0))
    graph = OpGraph(ops, (Slot(2, 3),))
    assert evaluate(graph, ()).time == 9  # a, b and c rerun
    assert evaluate(graph, {1}).time == 6  # b is skipped, its unkept ancestor a is not
    assert evaluate(graph, {0, 1}).time == 1  # only c reruns
    assert evaluate(graph, {2}).time == 0  # covered: no rerun at all
    assert solve_ops(graph, 10).keep == frozenset({2})


def test_unskippable_kept_op_still_runs():
    graph = OpGraph((Op("inplace_", 4, 8, skippable=False), Op("use", 1, 0)), (Slot(0, 1),))
    assert evaluate(graph, ()).time == 4
    assert evaluate(graph, {0}).time == 0  # covered: no rerun
    graph = OpGraph((Op("inplace_", 4, 8, skippable=False), Op("x", 1, 8), Op("use", 1, 0)),
                    (Slot(1, 2),))
    assert evaluate(graph, {0}).time == 5  # kept but rerun: the stop is past it


def test_bad_graphs_and_assignments_raise():
    with pytest.raises(ValueError, match="outside"):
        OpGraph((Op("a", 1, 1),), (Slot(0, 3),))
    with pytest.raises(ValueError, match="negative"):
        OpGraph((Op("a", -1, 1),), ())
    graph = OpGraph((Op("a", 1, 1),), (Slot(0, 0),))
    with pytest.raises(ValueError, match="cannot be offloaded"):
        evaluate(graph, (), {0})
    with pytest.raises(ValueError, match="both kept and offloaded"):
        evaluate(graph, {0}, {0})
