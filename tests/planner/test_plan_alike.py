"""Blocks alike are profiled, recorded and measured once (NOTE [ Alike calls ], NOTE [ Blocks
measured alone ]), and the plan still trains exactly as no recompute does; Plan.timings."""

from __future__ import annotations

import json

import numpy as np
import paddle
import pytest
from paddle import nn

import paddle_recompute as pr
from paddle_recompute._planner.plan.timings import STAGES

D = 32


class Block(nn.Layer):
    def __init__(self, wide: int = 2):
        super().__init__()
        self.up = nn.Linear(D, wide * D)
        self.down = nn.Linear(wide * D, D)
        self.drop = nn.Dropout(0.1)  # a random draw: regions must replay it exactly
        self.forwards = 0

    def forward(self, x):
        self.forwards += 1
        return x + self.drop(self.down(nn.functional.gelu(self.up(x))))


def _model(widths):
    paddle.seed(0)
    return nn.Sequential(*[Block(w) for w in widths])


def _input():
    paddle.seed(1)
    x = paddle.randn([16, D])
    x.stop_gradient = False
    return x


def _train(model, x, plan=None, steps=2):
    """Losses, gradients and parameters after ``steps`` SGD steps (under ``plan``)."""
    opt = paddle.optimizer.SGD(0.05, parameters=model.parameters())
    out = []
    handle = plan.apply(model) if plan is not None else None
    try:
        for step in range(steps):
            paddle.seed(10 + step)
            loss = model(x).square().mean()
            loss.backward()
            out += [loss.numpy()] + [p.grad.numpy() for p in model.parameters()]
            opt.step()
            opt.clear_grad()
    finally:
        if handle is not None:
            handle.remove()
    return out + [p.numpy() for p in model.parameters()]


def test_blocks_alike_are_measured_once_and_the_plan_is_exact():
    model, x = _model([2, 2, 2, 2]), _input()
    plan = pr.planner.plan(model, x, budget=0.5, blocks=list(model), final_rounds=0)
    counts = [b.forwards for b in model]
    # the other blocks ran only in the profile's first forward, which counted their bytes
    # and captured the first block's inputs; the first ran also the profile's other
    # forwards, its reruns, its operator recording and every measured option, alone
    assert counts[1:] == [1, 1, 1], counts
    assert counts[0] > 3 + 3, counts
    prof = plan.profile
    assert prof.layers["1"].recompute_s == prof.layers["0"].recompute_s
    assert all(prof.policy_costs[b] == prof.policy_costs["0"] for b in prof.blocks)
    assert any(k.startswith("ops:") for k in prof.policy_costs["0"])
    assert len({id(prof.op_profiles[b]) for b in prof.blocks}) == 1
    assert any(c.kind != "keep" for c in plan.choices)
    reference = _train(_model([2, 2, 2, 2]), x)
    fresh = _model([2, 2, 2, 2])
    calls = []
    hooks = [layer.register_forward_pre_hook(lambda layer, args: calls.append(1))
             for layer in fresh.sublayers()]
    try:
        got = _train(fresh, x, plan=plan)
    finally:
        for hook in hooks:
            hook.remove()
    assert len(calls) > 2 * 4 * 4  # 2 steps, 4 blocks of 4 layers each: a region reran
    for a, b in zip(got, reference, strict=True):
        np.testing.assert_array_equal(a, b)


def test_blocks_unlike_get_their_own_measurements():
    model, x = _model([2, 3, 2, 3]), _input()
    plan = pr.planner.plan(model, x, budget=0.5, blocks=list(model), final_rounds=0)
    counts = [b.forwards for b in model]
    assert counts[2:] == [1, 1] and min(counts[:2]) > 3 + 3, counts  # one measured per shape
    prof = plan.profile
    assert prof.policy_costs["2"] == prof.policy_costs["0"]
    assert prof.policy_costs["3"] == prof.policy_costs["1"]
    assert prof.op_profiles["0"] is prof.op_profiles["2"] is not prof.op_profiles["1"]


def test_planning_runs_the_blocks_as_often_at_any_depth():
    # the profile's timing forwards, reruns, operator recording and measured options run
    # one block of each kind: 16 blocks alike cost the first block as many forwards as 4,
    # and each other block one (the profile's first forward, which counts its bytes)
    counts, profs = {}, {}
    for n in (4, 16):
        model = _model([2] * n)
        profs[n] = pr.planner.profile(model, _input(), blocks=list(model))
        assert [b.forwards for b in model] == [3 + 3] + [1] * (n - 1)  # 3 runs, 3 reruns
        model = _model([2] * n)
        pr.planner.plan(model, _input(), budget=0.5, blocks=list(model), final_rounds=0,
                        options=["full", "policy:selective"])
        counts[n] = [b.forwards for b in model]
        assert counts[n][1:] == [1] * (n - 1), counts[n]
    assert counts[16][0] == counts[4][0] > 6, counts
    for n, prof in profs.items():  # bytes are each block's own; times its first alike's
        assert [prof.layers[b].saved_bytes for b in prof.blocks[1:]] == [
            prof.layers["1"].saved_bytes] * (n - 1)
        for b in prof.blocks[1:]:
            for rel in ("", ".up", ".down"):
                assert prof.layers[b + rel].forward_s == prof.layers["0" + rel].forward_s
                assert prof.layers[b + rel].recompute_s == prof.layers["0" + rel].recompute_s
    assert profs[16].layers["0"].saved_bytes == profs[4].layers["0"].saved_bytes


def test_blocks_sharing_a_layer_all_run_in_every_profile_run():
    # a layer two blocks share is called by each: skipping one would renumber its calls
    model = _model([2, 2, 2])
    model[2].up = model[1].up
    pr.planner.profile(model, _input(), blocks=list(model))
    assert [b.forwards for b in model] == [6, 3, 3]


def test_timings_name_every_stage_and_sum_to_at_most_the_total(tmp_path):
    model, x = _model([2, 2, 2]), _input()
    plan = pr.planner.plan(model, x, budget=0.5)
    t = plan.timings
    assert list(t) == [*STAGES, "total"]
    for clock in ("wall_s", "cpu_s"):
        assert all(row[clock] >= 0 for row in t.values())
        assert t["profile"][clock] > 0 and t["record_ops"][clock] > 0
        assert t["measure_options"][clock] > 0 and t["final"][clock] > 0
        assert sum(t[s][clock] for s in STAGES) <= t["total"][clock] + 1e-6
    # the stages are most of the total: the checks around them are cheap
    assert sum(t[s]["cpu_s"] for s in STAGES) >= 0.8 * t["total"]["cpu_s"]
    plan.save(tmp_path / "plan.json")
    assert json.loads((tmp_path / "plan.json").read_text())["timings"] == t
    assert pr.planner.Plan.load(tmp_path / "plan.json").timings == t
    # with a profile given, nothing is profiled
    again = pr.planner.plan(model, x, budget=0.5, profile=plan.profile, final_rounds=0)
    assert again.timings["profile"]["cpu_s"] < 0.01 and again.timings["final"]["cpu_s"] < 0.01


@pytest.mark.parametrize("argv_budget", ["0.5"])
def test_plan_command_prints_where_the_time_went(tmp_path, capsys, argv_budget):
    target = tmp_path / "target.py"
    target.write_text(
        "import paddle\n"
        "def make():\n"
        "    paddle.seed(0)\n"
        "    model = paddle.nn.Sequential(*[paddle.nn.Sequential(paddle.nn.Linear(16, 16), "
        "paddle.nn.Tanh()) for _ in range(3)])\n"
        "    return model, paddle.randn([8, 16])\n")
    from paddle_recompute.__main__ import main

    assert main(["plan", f"{target}:make", "--budget", argv_budget, "-o",
                 str(tmp_path / "plan.json")]) == 0
    out = capsys.readouterr().out
    assert "planned in" in out and "profile" in out and "measure options" in out and "final" in out
    assert set(json.loads((tmp_path / "plan.json").read_text())["timings"]) == {*STAGES, "total"}
