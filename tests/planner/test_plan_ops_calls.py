"""The operator-level option on calls that are not blocks (NOTE [ Operator units ]): each call
of a layer listed twice in a ``Sequential`` is recorded, solved and measured on its own;
plans hold what they predict, train exactly, skip the kept operators in their reruns, and
survive save, load and apply on a freshly built model."""

import collections

import paddle
import pytest
from _op_counts import counting_ops
from _plan_apply import apply_and_step, held_after_forward, train_step
from paddle import nn

import paddle_recompute as pr
from paddle_recompute._planner.options import units as op_units
from paddle_recompute._planner.plan import tree as tree_plan
from paddle_recompute._planner.solvers import tree as tree_solve
from paddle_recompute.testing import assert_tensors_equal

D = 64


def _twice(seed=0):
    """One instance at two places of a Sequential (as benchmarks/regions.py's ``twice``)."""
    paddle.seed(seed)
    block = nn.Sequential(nn.Linear(D, D), nn.GELU(), nn.Linear(D, D), nn.Tanh())
    return nn.Sequential(nn.Linear(D, D), block, nn.ReLU(), block, nn.Linear(D, D))


def _input():
    paddle.seed(3)
    x = paddle.randn([32, D])
    x.stop_gradient = False
    return x


@pytest.fixture(scope="module")
def twice():
    """The model, its input and a profile with the calls' and runs' operator graphs recorded
    (``prof.op_profiles``, which the first plan with the ``ops`` option fills), so that every
    test reads the same profile whichever tests ran before it."""
    model, x = _twice(), _input()
    train_step(model, x)  # first call: lazily made state
    prof = pr.planner.profile(model, x, repeats=1)
    _ops_plan(model, x, prof, 0.5)
    assert {"1", "1@1", "[1:5]"} <= set(prof.op_profiles)
    return model, x, prof


def test_each_call_of_the_shared_sequential_is_a_unit(twice):
    """The two calls of ``1`` qualify (large, few saves, no block near); the leaves and the
    model's own call do not."""
    _, _, prof = twice
    assert not prof.blocks
    assert op_units.op_units(prof) == {"1": ("1", 0), "1@1": ("1", 1)}
    assert op_units.op_units(prof, calls=False) == {}


def _ops_plan(model, x, prof, budget):
    # only ``ops``: whether it beats ``full`` and the runs depends on timings; this is about
    # the option on the calls (the solver's plan: no final measurement)
    return pr.planner.plan(model, x, budget=budget, profile=prof, options=["ops"], final_rounds=0)


def test_both_calls_get_operator_options_from_one_graph(twice):
    model, x, prof = twice
    plan = _ops_plan(model, x, prof, 0.5)
    assert {c.kind for c in plan.choices} == {"ops"}
    assert sorted((c.targets, c.call, c.calls) for c in plan.choices) == [
        (("1",), 0, 2), (("1",), 1, 2)]
    assert prof.op_profiles["1"] is prof.op_profiles["1@1"]  # same operators: one graph
    assert [o.name for o in prof.op_profiles["1"].graph.ops] == ["linear", "gelu", "linear", "tanh"]
    assert {"ops:0", "ops:1"} <= set(prof.policy_costs["1@1"])  # measured per call
    root, cands = tree_plan.call_tree(prof, pr.planner.option_kinds())
    assert any(c.kind == "ops" for c in cands["1@1"]) and any(c.kind == "full" for c in cands["1@1"])


@pytest.mark.parametrize("budget", [0.5, 0.75])
def test_operator_plan_on_calls_holds_its_prediction_and_trains_exactly(twice, budget):
    model, x, prof = twice
    plan = _ops_plan(model, x, prof, budget)
    assert plan.predicted_bytes <= plan.budget
    run = apply_and_step(plan, model, x)
    # the tree's model over-predicts by a region's output that a kept consumer takes without
    # saving it (NOTE [ Region tree ]): call 0's output, which the ReLU takes, one tensor
    over = (plan.predicted_bytes - prof.total_bytes) - (run.held - run.base)
    assert over in (0, 32 * D * 4), (run.held, run.base, str(plan))
    assert run.loss == run.ref_loss
    assert_tensors_equal(run.grads, run.ref_grads)


def _keeping_plan(model, prof):
    """Call 0 under an ``ops`` point that keeps an output, call 1 under one that keeps none:
    picked by hand (which the solver picks depends on measured times)."""
    root, cands = tree_plan.call_tree(prof, ["ops"])
    first = next(i for i, c in enumerate(cands["1"]) if c.payload.keep)
    second = next(i for i, c in enumerate(cands["1@1"]) if not c.payload.keep)
    picks = (tree_solve.Pick("1", first), tree_solve.Pick("1@1", second))
    memory, seconds = tree_solve.tree_plan_cost(root, picks)
    return pr.planner.Plan(budget=prof.total_bytes, baseline_bytes=prof.total_bytes,
                           predicted_bytes=int(memory), extra_s=seconds, forward_s=prof.forward_s,
                           choices=tree_plan.choices_of(prof, cands, picks),
                           layers={"1": model.get_sublayer("1")})


def test_reruns_skip_the_kept_operators(twice):
    """Where a call keeps outputs, the operators its rerun runs are exactly those the
    operator model says (before the last uncovered slot, not kept), counted per name."""
    model, x, prof = twice
    plan = _keeping_plan(model, prof)
    graph = prof.op_profiles["1"].graph
    expected = collections.Counter()
    for c in plan.choices:
        expected.update(o.name for o in graph.ops)  # the region's forward
        stop = max((s.reach for s in graph.slots if s.producer is not None
                    and s.producer not in c.payload.keep), default=0)
        expected.update(o.name for j, o in enumerate(graph.ops[:stop]) if j not in c.payload.keep)
    with plan.apply(), counting_ops("linear", "gelu", "tanh") as counts:
        train_step(model, x)
    assert counts == expected
    assert counts["linear"] < 8  # a forward and a full rerun of both calls: 8


def test_saved_plan_with_call_options_applies_to_a_fresh_model(twice, tmp_path):
    model, x, prof = twice
    plan = _keeping_plan(model, prof)
    with plan.apply():
        original = held_after_forward(model, x)
        model.clear_gradients()
    path = tmp_path / "plan.json"
    plan.save(path)
    loaded = pr.planner.Plan.load(path)
    assert loaded.to_dict() == plan.to_dict()
    assert {c.call for c in loaded.choices} == {0, 1} and all(c.payload for c in loaded.choices)
    fresh = _twice(seed=5)
    ref_loss, ref_grads = train_step(fresh, x)
    with loaded.apply(fresh):
        assert held_after_forward(fresh, x) == original
        fresh.clear_gradients()
        loss, grads = train_step(fresh, x)
    assert loss == ref_loss
    assert_tensors_equal(grads, ref_grads)


def _run_plan(model, prof, span=(1, 4)):
    """The run of the root's children ``span`` under its ``ops`` point keeping the most
    that still recomputes something, picked by hand."""
    root, cands = tree_plan.call_tree(prof, pr.planner.option_kinds())
    key = f"[{span[0]}:{span[1] + 1}]"
    points = [(len(c.payload.keep), i) for i, c in enumerate(cands[key])]
    picks = (tree_solve.Pick("", max(points)[1] - 1, span=span),)
    memory, seconds = tree_solve.tree_plan_cost(root, picks)
    choices = tree_plan.choices_of(prof, cands, picks)
    return pr.planner.Plan(budget=prof.total_bytes, baseline_bytes=prof.total_bytes,
                           predicted_bytes=int(memory), extra_s=seconds, forward_s=prof.forward_s,
                           choices=choices, layers={t: model.get_sublayer(t) for t in choices[0].targets})


def test_runs_of_calls_are_units(twice):
    """Runs of the root's chained children are recorded as slices of the root's operators;
    the run of all of them is not a region, so not a unit."""
    model, x, prof = twice
    runs = op_units.op_runs(prof)
    assert runs["[1:5]"] == ("", 1, 4) and "[0:5]" not in runs
    pr.planner.plan(model, x, budget=0.5, profile=prof, options=["full", "ops"], final_rounds=0)
    graph = prof.op_profiles["[1:5]"].graph
    assert [o.name for o in graph.ops] == (["linear", "gelu", "linear", "tanh", "relu"]
                                           + ["linear", "gelu", "linear", "tanh", "linear"])
    # the run's input (the first Linear's output) is held by the region: made by None
    assert graph.slots[0].producer is None
    root, _ = tree_plan.call_tree(prof, pr.planner.option_kinds())
    assert any((lo, hi) == (1, 4) and opts for lo, hi, opts in root.children[0].run_options)


def test_operator_option_on_a_run_trains_exactly_and_skips_kept_operators(twice, tmp_path):
    """The run of children 1..4 (the shared Sequential twice, the ReLU between, the last
    Linear) under an ``ops`` point: held bytes as predicted, loss and gradients equal to no
    recompute, the rerun runs the operators the model says; saved, loaded and applied to a
    fresh model it holds the same bytes."""
    model, x, prof = twice
    plan = _run_plan(model, prof)
    (choice,) = plan.choices
    assert choice.kind == "ops" and choice.span == (1, 5) and choice.payload.keep
    assert choice.targets == ("1", "2", "1", "4") and choice.members == ((0, 2), (0, 1), (1, 2), (0, 1))
    ref_loss, ref_grads = train_step(model, x)
    base = held_after_forward(model, x)
    model.clear_gradients()
    graph = prof.op_profiles["[1:5]"].graph
    stop = max(s.reach for s in graph.slots if s.producer is not None
               and s.producer not in choice.payload.keep)
    expected = collections.Counter(o.name for o in graph.ops)
    expected.update(o.name for j, o in enumerate(graph.ops[:stop]) if j not in choice.payload.keep)
    with plan.apply():
        held = held_after_forward(model, x)
        model.clear_gradients()
        with counting_ops(*{o.name for o in graph.ops}) as counts:
            loss, grads = train_step(model, x)
    assert held - base == plan.predicted_bytes - prof.total_bytes
    assert counts == expected and counts["linear"] < 2 * 5
    assert loss == ref_loss
    assert_tensors_equal(grads, ref_grads)
    path = tmp_path / "plan.json"
    plan.save(path)
    fresh = _twice(seed=5)
    ref_loss, ref_grads = train_step(fresh, x)
    with pr.planner.Plan.load(path).apply(fresh):
        assert held_after_forward(fresh, x) == held
        fresh.clear_gradients()
        loss, grads = train_step(fresh, x)
    assert loss == ref_loss
    assert_tensors_equal(grads, ref_grads)


def test_saved_plan_on_another_model_names_the_layer_and_call(twice, tmp_path):
    model, x, prof = twice
    path = tmp_path / "plan.json"
    _keeping_plan(model, prof).save(path)
    loaded = pr.planner.Plan.load(path)
    other = _twice()
    other._sub_layers["1"] = nn.Linear(D, D)  # a Linear where the plan has the Sequential
    with pytest.raises(ValueError, match=r"layer '1' is a Linear, but the plan was made for a Sequential"):
        loaded.apply(other)
    paddle.seed(0)
    block = nn.Sequential(nn.Linear(D, D), nn.ReLU(), nn.Linear(D, D), nn.Tanh())  # relu for gelu
    changed = nn.Sequential(nn.Linear(D, D), block, nn.ReLU(), block, nn.Linear(D, D))
    with loaded.apply(changed), pytest.raises(pr.RecomputeError,
                                              match=r"block '1(@1)?' ran operator #1 'relu'"):
        train_step(changed, x)


def test_a_runs_points_are_priced_by_the_planners_clock(monkeypatch):
    """NOTE [ Operator clock ]: operator times are the wall clock's; where the planner's clock
    ran a quarter of it while the operators were recorded (a loaded machine), a run's ``ops``
    points are priced at a quarter of their wall-clock seconds."""
    import time
    from dataclasses import replace

    from paddle_recompute._planner.options import op_profile as profile_ops
    from paddle_recompute._planner.options import ops as op_options

    model, x = _twice(), _input()
    train_step(model, x)
    prof = pr.planner.profile(model, x, repeats=1)
    monkeypatch.setattr(profile_ops, "clock", lambda: time.perf_counter() / 4)
    pr.planner.plan(model, x, budget=0.5, profile=prof, options=["full", "ops"], final_rounds=0)
    monkeypatch.undo()
    op_prof = prof.op_profiles["[1:5]"]
    assert op_prof.clock_scale == pytest.approx(0.25, rel=1e-2)

    def run_prices():
        root, _ = tree_plan.call_tree(prof, pr.planner.option_kinds())
        return next(opts for lo, hi, opts in root.children[0].run_options if (lo, hi) == (1, 4))

    scaled = [o.time for o in run_prices()]
    prof.op_profiles["[1:5]"] = replace(op_prof, clock_scale=1.0)
    wall = [o.time for o in run_prices()]
    points = op_options._points(op_prof)
    assert len(scaled) == len(points) >= 1
    for s, w, p in zip(scaled, wall, points, strict=True):
        assert w - s == pytest.approx((1 - op_prof.clock_scale) * (op_prof.overhead_s + p.time), rel=1e-9)
