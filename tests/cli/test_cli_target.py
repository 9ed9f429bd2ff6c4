"""One target for the command line: ``profile``, ``plan`` and ``parity`` take the same
``MODULE:CALLABLE`` (returning ``(model, inputs)``), so the plan made on the model just
profiled is checked for parity on that model."""

from __future__ import annotations

import sys
import textwrap

import pytest

import paddle_recompute as pr
from paddle_recompute.__main__ import main

TARGET = """
    import paddle

    FORWARDS = [0]  # calls of every layer's forward, reruns included


    class Counted:
        def forward(self, *args):
            FORWARDS[0] += 1
            return super().forward(*args)


    class Linear(Counted, paddle.nn.Linear):
        pass


    class LayerNorm(Counted, paddle.nn.LayerNorm):
        pass


    class Dropout(Counted, paddle.nn.Dropout):
        pass


    class Block(paddle.nn.Layer):
        def __init__(self, h):
            super().__init__()
            self.fc1, self.fc2 = Linear(h, 2 * h), Linear(2 * h, h)
            self.norm, self.drop = LayerNorm(h), Dropout(0.1)

        def forward(self, x):
            FORWARDS[0] += 1
            return x + self.drop(self.fc2(paddle.nn.functional.gelu(self.fc1(self.norm(x)))))


    def make():
        model = paddle.nn.Sequential(*[Block(16) for _ in range(3)])
        x = paddle.randn([8, 16])
        x.stop_gradient = False
        return model, x

    def make_wider():
        model = paddle.nn.Sequential(*[Block(32) for _ in range(3)])
        return model, paddle.randn([8, 32])

    def make_case():
        def build(recompute):
            model = make()[0]
            return model, paddle.optimizer.SGD(0.1, parameters=model.parameters())

        def step(model, optimizer, k):
            loss = model(paddle.randn([8, 16])).mean()
            loss.backward()
            return loss

        return build, step
"""

STEPS = 2
PER_STEP = 3 * 5  # per step without recompute: 3 blocks of 5 counted forwards
KINDS = "keep,full,sub"  # kinds that rerun (an offloading plan would not: the count tells)


@pytest.fixture
def target(tmp_path, monkeypatch):
    """An importable module ``clitarget`` (a dotted target: its counter is one object)."""
    (tmp_path / "clitarget.py").write_text(textwrap.dedent(TARGET))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "clitarget", raising=False)
    yield tmp_path
    sys.modules.pop("clitarget", None)


def test_profile_plan_parity_on_one_target(target, capsys):
    prof, plan = target / "profile.json", target / "plan.json"
    assert main(["profile", "clitarget:make", "-o", str(prof)]) == 0
    assert f"wrote {prof}" in capsys.readouterr().out
    assert main(["plan", "clitarget:make", "--budget", "0.3", "--profile", str(prof),
                 "--final-rounds", "0", "--options", KINDS, "-o", str(plan)]) == 0
    assert f"wrote {plan}" in capsys.readouterr().out
    saved = pr.planner.Plan.load(plan)
    assert saved.choices and saved.predicted_bytes <= saved.budget
    counter = sys.modules["clitarget"].FORWARDS
    counter[0] = 0
    assert main(["parity", "clitarget:make", "--plan", str(plan), "--steps", str(STEPS)]) == 0
    out = capsys.readouterr().out
    assert f"parity of clitarget:make with plan {plan}: {STEPS} steps from seed 0, exact" in out
    assert "PASS" in out
    # both trainings ran every layer each step, and the planned one reran some in backward
    assert counter[0] > 2 * STEPS * PER_STEP


def test_plan_uses_the_saved_profile_without_profiling(target, monkeypatch, capsys):
    prof = target / "profile.json"
    assert main(["profile", "clitarget:make", "-o", str(prof)]) == 0

    def no_profile(*args, **kwargs):
        raise AssertionError("plan profiled again")

    monkeypatch.setattr("paddle_recompute._planner.plan.make.run_profile", no_profile)
    assert main(["plan", "clitarget:make", "--budget", "0.5", "--profile", str(prof),
                 "--final-rounds", "0"]) == 0
    capsys.readouterr()
    assert main(["plan", "clitarget:make_wider", "--budget", "0.5", "--profile", str(prof)]) == 2
    assert ("plan: the profile given was made for another model: parameter '0.fc1.weight' is "
            "float32 of shape [32, 64] here, float32 of shape [16, 32] there"
            in capsys.readouterr().err)
    (target / "bad.json").write_text('{"format": "paddle_recompute.profile/1", "total')
    assert main(["plan", "clitarget:make", "--budget", "0.5", "--profile",
                 str(target / "bad.json")]) == 2
    assert "it ends early (truncated?)" in capsys.readouterr().err
    assert main(["plan", "clitarget:make", "--budget", "0.5", "--profile",
                 str(target / "missing.json")]) == 2
    assert "No such file or directory" in capsys.readouterr().err


def test_parity_of_a_model_target_needs_a_plan_that_fits(target, capsys):
    assert main(["parity", "clitarget:make"]) == 2
    assert ("parity: clitarget:make returns (model, inputs); pass the plan to check: --plan "
            "plan.json (from `paddle-recompute plan clitarget:make --budget 0.5 -o plan.json`)"
            in capsys.readouterr().err)
    plan = target / "plan.json"
    assert main(["plan", "clitarget:make", "--budget", "0.3", "--final-rounds", "0",
                 "--options", KINDS, "-o", str(plan)]) == 0
    capsys.readouterr()
    assert main(["parity", "clitarget:make_wider", "--plan", str(plan)]) == 2
    err = capsys.readouterr().err
    assert f"parity: --plan {str(plan)!r} does not fit the model of clitarget:make_wider" in err
    assert "made for another model" in err
    (target / "notes.json").write_text("steps: 2")
    assert main(["parity", "clitarget:make", "--plan", str(target / "notes.json")]) == 2
    assert "parity: --plan: Plan.load: cannot read" in capsys.readouterr().err


def test_a_training_case_target_still_works_and_takes_a_plan(target, capsys):
    plan = target / "plan.json"
    assert main(["plan", "clitarget:make", "--budget", "0.3", "--final-rounds", "0",
                 "--options", KINDS, "-o", str(plan)]) == 0
    capsys.readouterr()
    counter = sys.modules["clitarget"].FORWARDS
    counter[0] = 0
    assert main(["parity", "clitarget:make_case", "--steps", str(STEPS)]) == 0
    assert "PASS" in capsys.readouterr().out
    assert counter[0] == 2 * STEPS * PER_STEP  # no plan: nothing reruns
    counter[0] = 0
    assert main(["parity", "clitarget:make_case", "--plan", str(plan), "--steps", str(STEPS)]) == 0
    assert "PASS" in capsys.readouterr().out
    assert counter[0] > 2 * STEPS * PER_STEP


def test_a_callable_tensor_still_reads_as_inputs(target, monkeypatch, capsys):
    """PaddleFormers gives ``paddle.Tensor`` a ``__call__`` when imported: a ``(model, inputs)``
    target is still told apart from a training case."""
    import paddle

    monkeypatch.setattr(paddle.Tensor, "__call__", lambda self, *args, **kwargs: self, raising=False)
    assert callable(paddle.zeros([1]))
    assert main(["parity", "clitarget:make"]) == 2
    assert "parity: clitarget:make returns (model, inputs); pass the plan to check" in capsys.readouterr().err
