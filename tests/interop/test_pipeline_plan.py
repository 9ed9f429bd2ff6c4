"""``planner.plan_stage`` on a ``PipelineLayer`` over two CPU processes (gloo), 1F1B with four
micro-batches: each rank plans its own stage under one device budget (with its fixed memory,
no headroom for the backward: plan_stage measures that itself), then trains.

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
    return {rank: (_spawn.load(out_dir, "plain", rank), _spawn.load(out_dir, "planned", rank),
                   {mode: _spawn.load(out_dir, f"every_block_{mode}", rank)
                    for mode in ("reentrant", "non_reentrant")})
            for rank in RANKS}


def test_planned_stages_train_exactly_as_without_recompute(runs):
    for rank, (plain, planned, _) in runs.items():
        for key in plain:
            if key not in ("calls", "fixed", "peaks", "held"):
                np.testing.assert_array_equal(planned[key], plain[key], err_msg=f"stage {rank}: {key}")
    assert len(set(runs[0][0]["losses"].ravel())) == worker.STEPS  # it trained


@pytest.mark.parametrize("mode", ["reentrant", "non_reentrant"])
def test_stages_that_pass_the_mask_on_train_exactly_with_every_block_recomputed(runs, mode):
    """Each block passes the mask on as it is, and the pipeline frees a stage's outputs
    once sent, that mask among them; every block's region took it, and reruns from its own
    alias of it (NOTE [ Inputs as aliases ]), bit-exactly as without recompute."""
    for rank, (plain, _, every_block) in runs.items():
        got = every_block[mode]
        for key in plain:
            if key not in ("calls", "fixed", "peaks", "held"):
                np.testing.assert_array_equal(got[key], plain[key], err_msg=f"stage {rank}: {key}")
        assert got["calls"] == 2 * plain["calls"]  # every block's forward, then its rerun


def test_each_stage_peaks_within_the_device_budget(runs):
    """Given only the device budget and the fixed memory (parameters, gradients, AdamW's
    moments; no headroom), each stage's allocator peak over a whole step, the backward's
    working memory and the reruns included, fits the budget.  Without the plan the first
    stage's peak exceeds it, so the plan is what makes it fit."""
    for rank, (_, planned, _) in runs.items():
        # the allocator's peak over each measured step, beyond what was allocated before the
        # stage was built (its fixed memory, the sample inputs and the peak of the step)
        top = planned["fixed"][1:] + planned["peaks"][1:]
        assert top.max() <= int(planned["budget"]), (rank, top, int(planned["budget"]))
        assert planned["held"][1:].max() < planned["peaks"][1:].max()  # the backward adds on top
    plain0, planned0, _ = runs[0]
    room0 = int(planned0["budget"]) - int(planned0["measured_fixed"])
    assert plain0["peaks"][1:].min() > room0, (plain0["peaks"], room0)
    # the share of the two micro-batches in flight left the backward's working memory out
    # (at least the peak less the held bytes without recompute, measured in the pipeline)
    working0 = int((plain0["peaks"][1:] - plain0["held"][1:]).max())
    assert 2 * int(planned0["stage_budget"]) <= room0 - working0, (planned0["stage_budget"], working0)


def test_the_first_stage_holds_two_micro_batches_so_gets_the_tighter_plan(runs):
    """Stage 0 holds min(2 - 0, 4) = 2 micro-batches, stage 1 one: stage 0's share per
    micro-batch is about half, it recomputes (its GELUs rerun, it holds less than without
    the plan, by two micro-batches' saving), and stage 1 keeps everything."""
    (plain0, planned0, _), (plain1, planned1, _) = runs[0], runs[1]
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

