"""``planner.plan_stage`` on a ``PipelineLayer`` over two CPU processes (gloo), 1F1B with four
micro-batches: each rank plans its own stage under one device budget, then trains.

One spawn (``_pipeline_plan_worker``) trains without recompute, then with the plans; the
tests compare what each rank saved.  Steps after the first are measured (the first
allocates gradients and optimizer state).
"""

import _pipeline_plan_worker as worker
import _spawn
import numpy as np
import pytest

RANKS = (0, 1)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out_dir = str(tmp_path_factory.mktemp("pipeline_plan"))
    _spawn.spawn(worker.worker, out_dir)
    return {rank: (_spawn.load(out_dir, "plain", rank), _spawn.load(out_dir, "planned", rank))
            for rank in RANKS}


def test_planned_stages_train_exactly_as_without_recompute(runs):
    for rank, (plain, planned) in runs.items():
        for key in plain:
            if key not in ("calls", "fixed", "peaks", "held"):
                np.testing.assert_array_equal(planned[key], plain[key], err_msg=f"stage {rank}: {key}")
    assert len(set(runs[0][0]["losses"].ravel())) == worker.STEPS  # it trained


def test_each_stage_holds_within_its_budget(runs):
    """At its most micro-batches in flight (after each forward), what a stage holds beyond
    its fixed memory fits its share (the budget less the fixed memory and the backward's
    headroom, passed as ``fixed_bytes``); the allocator's peak over the whole step fits the
    device budget.  Without the plan the first stage would not fit its share."""
    for rank, (_, planned) in runs.items():
        share = int(planned["budget"]) - int(planned["planned_fixed"])
        assert planned["held"][1:].max() <= share, (rank, planned["held"], share)
        room = int(planned["budget"]) - int(planned["measured_fixed"])
        assert planned["peaks"][1:].max() <= room, (rank, planned["peaks"], room)
    plain0, planned0 = runs[0]
    assert plain0["held"][1:].min() > int(planned0["budget"]) - int(planned0["planned_fixed"])
    # the allocator's peak, the backward's working memory included, drops too
    assert planned0["peaks"][1:].max() < plain0["peaks"][1:].min(), (plain0["peaks"], planned0["peaks"])


def test_the_first_stage_holds_two_micro_batches_so_gets_the_tighter_plan(runs):
    """Stage 0 holds min(2 - 0, 4) = 2 micro-batches, stage 1 one: stage 0's share per
    micro-batch is about half, it recomputes (its GELUs rerun, it holds less than without
    the plan, by two micro-batches' saving), and stage 1 keeps everything."""
    (plain0, planned0), (plain1, planned1) = runs[0], runs[1]
    assert int(planned0["budget"]) == int(planned1["budget"])  # one device budget
    assert int(planned0["stage_budget"]) < int(planned1["stage_budget"]) * 0.6
    assert planned0["choices"].size > 0 and planned1["choices"].size == 0
    assert int(planned0["predicted"]) < int(planned0["baseline"])
    assert int(planned1["predicted"]) == int(planned1["baseline"])
    assert planned0["calls"] > plain0["calls"]  # reruns
    assert planned1["calls"] == plain1["calls"]
    saved = 2 * (int(planned0["baseline"]) - int(planned0["predicted"]))
    assert (plain0["held"][1:] - planned0["held"][1:] >= saved).all(), (plain0["held"], planned0["held"])
    np.testing.assert_array_equal(planned1["held"][1:], plain1["held"][1:])
