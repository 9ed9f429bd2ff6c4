"""The operator-level solver on numbers alone: its frontier equals brute force on small graphs."""

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paddle_recompute._planner.solvers.ops import (
    Op,
    OpGraph,
    Slot,
    evaluate,
    live_ops,
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


@st.composite
def ancestor_graphs(draw):
    """Graphs priced by NOTE [ Ancestor model ]: each operator's input makers (or unknown),
    forced operators, slots with buffer aliases."""
    n = draw(st.integers(min_value=1, max_value=6))
    ops = []
    for j in range(n):
        makers = st.lists(st.integers(0, j - 1), max_size=3).map(tuple)
        inputs = draw(st.one_of(st.none(), makers)) if j else ()
        ops.append(Op(f"op{j}", draw(cost), draw(cost), draw(st.booleans()), draw(st.one_of(st.none(), cost)),
                      draw(st.integers(min_value=0, max_value=5)), inputs, draw(st.booleans())))
    slots = []
    for _ in range(draw(st.integers(min_value=0, max_value=6))):
        consumer = draw(st.integers(min_value=0, max_value=n - 1))
        producer = draw(st.one_of(st.none(), st.integers(min_value=0, max_value=consumer)))
        aliases = st.lists(st.integers(0, consumer), max_size=2).map(tuple)
        aliases = draw(aliases) if producer is not None else ()
        slots.append(Slot(producer, consumer, aliases))
    return OpGraph(tuple(ops), tuple(slots), ancestors=True)


@settings(max_examples=80, deadline=None)
@given(graph=ancestor_graphs(), budget=st.integers(min_value=0, max_value=300))
def test_ancestor_model_exact_equals_brute_force(graph, budget):
    exact, brute = solve_ops(graph, budget), solve_ops_brute_force(graph, budget)
    assert exact.time == brute.time
    assert exact.memory <= budget
    assert evaluate(graph, exact.keep, exact.offload) == exact
    # a rerun that leaves out dead operators never costs more than the prefix rerun
    prefix = dataclasses.replace(graph, ancestors=False)
    assert brute.time <= solve_ops_brute_force(prefix, budget).time


@settings(max_examples=15, deadline=None)
@given(graph=ancestor_graphs(), budget=st.integers(min_value=0, max_value=300))
def test_ancestor_frontier_fits_and_is_no_better_than_exact(graph, budget):
    front = op_frontier(graph).best(budget)
    assert front.memory <= budget and front.time >= solve_ops(graph, budget).time
    assert evaluate(graph, front.keep, front.offload) == front


def test_ancestor_model_runs_only_what_needed_tensors_depend_on():
    # a -> b -> c; backward needs b's output (saved by c) and c's own output (saved by use)
    ops = (Op("a", 5, 10, inputs=()), Op("b", 3, 10, inputs=(0,)), Op("side", 7, 10, inputs=(0,)),
           Op("c", 1, 10, inputs=(1,)), Op("use", 1, 0, inputs=(3,)))
    graph = OpGraph(ops, (Slot(1, 3), Slot(3, 4)), ancestors=True)
    assert evaluate(graph, ()).time == 9  # a, b, c: "side" feeds nothing needed
    assert evaluate(dataclasses.replace(graph, ancestors=False), ()).time == 16  # the prefix runs it
    assert evaluate(graph, {1}).time == 1  # b kept: only c reruns, a is not needed any more
    assert live_ops(graph, frozenset({1}), 4) == {3}
    forced = dataclasses.replace(graph, ops=(*ops[:2], dataclasses.replace(ops[2], forced=True), *ops[3:]))
    assert evaluate(forced, {1}).time == 13  # a forced operator (read by Python) runs, with a
    unknown = dataclasses.replace(graph, ops=(*ops[:3], dataclasses.replace(ops[3], inputs=None), ops[4]))
    assert evaluate(unknown, {1}).time == 13  # an input of unknown origin: all before it run
    assert solve_ops(graph, 10).keep == frozenset({1})
    view = OpGraph(ops, (Slot(1, 3, aliases=(2,)), Slot(3, 4)), ancestors=True)
    assert evaluate(graph, {2, 3}).time == 8  # b's output is needed: a and b rerun
    assert evaluate(view, {2, 3}).time == 0  # a kept view of the same buffer covers it
