"""The CLI's ``profile`` and ``plan`` on the benchmark's models (``benchmarks/regions.py``
targets), one of each kind: a layer listed twice, a shared layer called in a loop, runs of
calls in a forward of its own (SqueezeNet), an encoder-decoder with two inputs, and a
PaddleFormers causal LM called with keyword arguments."""

import json
from pathlib import Path

import pytest

import paddle_recompute as pr
from paddle_recompute._cli import main

REGIONS = Path(__file__).resolve().parents[2] / "benchmarks" / "regions.py"


@pytest.mark.parametrize("name", ["twice", "albert", "squeezenet1_1", "transformer", "pf_llama"])
def test_cli_profile_and_plan(name, tmp_path, capsys):
    target = f"{REGIONS}:{name}"
    assert main(["profile", target, "--json", str(tmp_path / "p.json")]) == 0
    calls = json.loads((tmp_path / "p.json").read_text())["calls"]
    assert calls and all("chained" in row for row in calls.values())
    # the solver's plan (--final-rounds 0): a timed choice between plans would make the
    # structure asserted below depend on the machine's speed
    assert main(["plan", target, "--budget", "0.5", "--final-rounds", "0",
                 "-o", str(tmp_path / "plan.json")]) == 0
    plan = pr.planner.Plan.load(tmp_path / "plan.json")
    assert plan.choices and plan.predicted_bytes <= plan.budget <= plan.baseline_bytes / 2 + 1
    if name == "squeezenet1_1":  # a run of the model's own children: its calls' members
        assert any(c.members for c in plan.choices), str(plan)
    assert "predicted" in capsys.readouterr().out.lower()
