"""The plan's final measurement (NOTE [ Final measurement ]): which plans are measured, that
each was applied while timed, and that the measured fastest is returned.  The timer is
replaced by one that counts reruns, so no test depends on the machine's speed."""

import paddle
import pytest

import paddle_recompute as pr
from paddle_recompute._planner import final_choice
from paddle_recompute._planner.final_choice import kind_subsets, shortlist, uniform_choices
from paddle_recompute._planner.options import Candidate
from paddle_recompute._planner.plan_value import BlockChoice, Plan


class _Block(paddle.nn.Layer):
    calls = 0

    def __init__(self):
        super().__init__()
        self.a, self.b = paddle.nn.Linear(16, 64), paddle.nn.Linear(64, 16)

    def forward(self, x):
        _Block.calls += 1
        return self.b(paddle.tanh(self.a(x)))


def _model():
    paddle.seed(0)
    return paddle.nn.Sequential(*[_Block() for _ in range(4)])


def _plan(options, predicted, extra):
    choices = [BlockChoice(f"b{i}", "full" if o == "full" else "keep", o, 0, 0.0, ())
               for i, o in enumerate(options)]
    return Plan(budget=100, baseline_bytes=100, predicted_bytes=predicted, extra_s=extra,
                forward_s=1.0, choices=choices)


def test_kind_subsets_each_kind_beside_keep_and_full():
    kinds = ("keep", "full", "sub", "policy:selective", "ops")
    assert kind_subsets(kinds) == [
        kinds, ("keep", "full", "sub", "policy:selective"), ("keep", "full", "sub"),
        ("keep", "full", "policy:selective"), ("keep", "full", "ops")]


def test_uniform_choices_only_options_every_block_has():
    a = [Candidate("keep", "keep", 10, 0.0, ()), Candidate("full", "full", 1, 1.0, ("x",))]
    b = [Candidate("keep", "keep", 10, 0.0, ()), Candidate("sub", "sub:a", 5, 0.5, ("y",))]
    assert [[c.name for c in u] for u in uniform_choices([a, b])] == [["keep", "keep"]]


def test_shortlist_keeps_the_solvers_first_drops_misfits_and_repeats():
    solver = _plan(["full", "keep"], 90, 0.5)
    same = _plan(["full", "keep"], 90, 0.5)
    too_big = _plan(["keep", "keep"], 101, 0.0)
    fast, slow = _plan(["keep", "full"], 80, 0.1), _plan(["full", "full"], 50, 0.9)
    cheap = _plan(["full", "sub"], 60, 0.2)
    out = shortlist([solver, slow, same, too_big, fast, cheap], limit=100, n=3)
    assert out == [solver, fast, cheap]


def _rerun_timer(counts):
    """A timer that runs the real step and calls it faster the more block forwards it ran
    (reruns included): measurement then contradicts the prediction, which ranks
    recomputing last."""

    def timer(call, roots, params):
        before = _Block.calls
        final_choice.step(call, roots, params)
        counts.append(_Block.calls - before)
        return 1.0 / (_Block.calls - before)

    return timer


def test_plan_returns_the_measured_fastest(monkeypatch):
    model = _model()
    x = paddle.randn([8, 16])
    x.stop_gradient = False
    prof = pr.planner.profile(model, x, blocks=list(model), repeats=1)
    solver = pr.planner.plan(model, x, budget=0.6, blocks=list(model), profile=prof,
                             options=["keep", "full"], final_rounds=0)
    assert sorted(c.option for c in solver.choices) == ["full", "full", "keep", "keep"]
    counts: list = []
    real = final_choice.measure_final

    def measured(call, table, roots, plans, rounds, timer=None):
        measured.plans = plans
        return real(call, table, roots, plans, rounds, timer=_rerun_timer(counts))

    monkeypatch.setattr("paddle_recompute._planner.plan.measure_final", measured)
    chosen = pr.planner.plan(model, x, budget=0.6, blocks=list(model), profile=prof,
                             options=["keep", "full"], final_rounds=2)
    # shortlisted: the solver's plan and every block recomputed (all kept does not fit)
    assert [[c.option for c in p.choices] for p in measured.plans] == [
        [c.option for c in solver.choices], ["full"] * 4]
    assert len(counts) == 2 * 3  # two plans, a warm-up and two rounds each
    assert sorted(set(counts)) == [6, 8]  # two reruns, four: each plan was applied
    assert [c.option for c in chosen.choices] == ["full"] * 4  # measured faster


def test_one_plan_is_not_measured(monkeypatch):
    calls = []
    monkeypatch.setattr(final_choice, "step", lambda *a: calls.append(a) or 1.0)
    only = _plan(["keep"], 1, 0.0)
    assert final_choice.measure_final(None, {}, (), [only], rounds=3) == (only, [1.0])
    assert not calls


@pytest.mark.parametrize("bad", [-1, 1.5, True, "2"])
def test_final_rounds_checked(bad):
    with pytest.raises(ValueError, match="final_rounds"):
        pr.planner.plan(_model(), paddle.randn([2, 16]), budget=0.5, final_rounds=bad)
