"""The plan's final measurement (NOTE [ Final measurement ]): which plans are measured, that
each was applied while timed, and that the measured fastest is returned only when it also
beats the best-predicted plan in a duel.  The timer is replaced by one that counts reruns or
reads scripted times, so no test depends on the machine's speed."""

import contextlib
import math

import paddle
import pytest

import paddle_recompute as pr
from paddle_recompute._core.layers import find_roots
from paddle_recompute._planner.harness import Session
from paddle_recompute._planner.options.alike import alike_blocks
from paddle_recompute._planner.options.kinds import Candidate
from paddle_recompute._planner.plan import final_choice
from paddle_recompute._planner.plan.final_choice import kind_subsets, shortlist, uniform_choices
from paddle_recompute._planner.plan.value import BlockChoice, Plan
from paddle_recompute._planner.profile.blocks import layer_table


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
    out = shortlist([solver, slow, same, too_big, fast, cheap], budget=100, n=3)
    assert out == [solver, fast, cheap]


def _rerun_timer(counts):
    """A timer that runs the real step and calls it faster the more block forwards it ran
    (reruns included): measurement then contradicts the prediction, which ranks
    recomputing last."""

    def timer(session):
        before = _Block.calls
        session.step()
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

    def measured(session, plans, rounds, timer=None, alike=None):
        measured.plans = plans
        return real(session, plans, rounds, timer=_rerun_timer(counts), alike=alike)

    monkeypatch.setattr("paddle_recompute._planner.plan.make.measure_final", measured)
    # every block recomputed is predicted 2x the solver's extra time: worth_timing, tested
    # on its own, would leave it out; here the measurement itself is under test
    monkeypatch.setattr("paddle_recompute._planner.plan.make.worth_timing", lambda plans: plans)
    chosen = pr.planner.plan(model, x, budget=0.6, blocks=list(model), profile=prof,
                             options=["keep", "full"], final_rounds=2)
    # shortlisted: the solver's plan and every block recomputed (all kept does not fit)
    assert [[c.option for c in p.choices] for p in measured.plans] == [
        [c.option for c in solver.choices], ["full"] * 4]
    # two plans timed by blocks, two rounds each (no warm-up: blocks alone need none); then
    # the duel: every block recomputed leads but is predicted slower, and wins all 6 paired
    # rounds
    assert len(counts) == 2 * 2 + 2 * 6
    # timed block by block: one block alone, kept (1 forward) or recomputed (2), each
    # configuration once a round (NOTE [ Final measurement ])
    assert sorted(set(counts)) == [1, 2]
    assert [c.option for c in chosen.choices] == ["full"] * 4  # measured faster


def _session(model, x, blocks):
    prof = pr.planner.profile(model, x, blocks=blocks, repeats=1)
    roots = find_roots(model, (x,), {})
    return Session((model, (x,), {}), layer_table(model, roots, blocks), roots, prof)


_PAIRED = ("0.0", "0.1", "1.0", "1.1")


def _paired_blocks():
    """Blocks two by two in Sequentials (a region around a pair is outside every block):
    the session and its groups alike."""
    paddle.seed(0)
    model = paddle.nn.Sequential(*[paddle.nn.Sequential(_Block(), _Block()) for _ in range(2)])
    x = paddle.randn([8, 16])
    x.stop_gradient = False
    session = _session(model, x, list(_PAIRED))
    return session, alike_blocks(session)


def _choice_plan(session, targets, extra):
    choices = [BlockChoice(t, "full", "full", 0, 0.0, (t,)) for t in targets]
    return Plan(budget=100, baseline_bytes=100, predicted_bytes=0, extra_s=extra, forward_s=1.0,
                choices=choices, layers={t: session.table[t] for t in targets})


def test_whole_steps_without_groups(monkeypatch):
    # no groups of blocks alike (``alike`` not given): each plan timed in whole steps
    model = _model()
    x = paddle.randn([8, 16])
    x.stop_gradient = False
    session = _session(model, x, list(model))
    kept_two = _choice_plan(session, ["0", "1"], 0.1)
    every = _choice_plan(session, ["0", "1", "2", "3"], 0.2)
    counts: list = []
    chosen, _ = final_choice.measure_final(session, [kept_two, every], rounds=2,
                                           timer=_rerun_timer(counts))
    assert len(counts) == 2 * 3 + 2 * 6
    assert sorted(set(counts)) == [6, 8]  # two reruns, four: each plan was applied
    assert chosen is every


def _forward_timer(sessions):
    """A timer that runs the real step and takes its block forwards (reruns included) as its
    seconds: more recompute, slower."""

    def timer(session):
        sessions.append(session)
        before = _Block.calls
        session.step()
        return float(_Block.calls - before)

    return timer


@pytest.mark.parametrize("depth", [4, 16])
def test_final_forwards_do_not_grow_with_depth(monkeypatch, depth):
    paddle.seed(0)
    model = paddle.nn.Sequential(*[_Block() for _ in range(depth)])
    x = paddle.randn([8, 16])
    x.stop_gradient = False
    prof = pr.planner.profile(model, x, blocks=list(model), repeats=1)
    real = final_choice.measure_final
    seen: dict = {}

    def measured(session, plans, rounds, timer=None, alike=None):
        before = _Block.calls
        out = real(session, plans, rounds, timer=_rerun_timer([]), alike=alike)
        seen.update(plans=plans, forwards=_Block.calls - before, alike=alike)
        return out

    monkeypatch.setattr("paddle_recompute._planner.plan.make.measure_final", measured)
    # every block recomputed is predicted 2x the solver's extra time: worth_timing, tested
    # on its own, would leave it out; here the measurement itself is under test
    monkeypatch.setattr("paddle_recompute._planner.plan.make.worth_timing", lambda plans: plans)
    chosen = pr.planner.plan(model, x, budget=0.6, blocks=list(model), profile=prof,
                             options=["keep", "full"], final_rounds=2)
    assert len(seen["plans"]) == 2 and [len(g.members) for g in seen["alike"].values()] == [depth]
    # a kept block alone (1 forward) and a recomputed one (2), once a round: two rounds (no
    # warm-up for blocks alone), then a duel the recomputed plan wins 7 times; at any depth
    assert seen["forwards"] == 3 * 2 + 3 * 6
    assert [c.option for c in chosen.choices] == ["full"] * depth  # measured faster


def test_plans_around_several_blocks_are_timed_whole():
    # blocks two by two in Sequentials: a region around a pair is outside every block, so
    # its plan is timed in whole steps, beside the first plan's as the anchor of the others
    session, alike = _paired_blocks()
    blocks = list(_PAIRED)
    assert [g.members for g in alike.values()] == [tuple(blocks)]
    first = _choice_plan(session, ["0.0"], 0.1)
    pair = _choice_plan(session, ["0"], 0.3)  # around blocks 0.0 and 0.1
    later = _choice_plan(session, ["1.0", "1.1"], 0.2)
    sessions: list = []
    chosen, ratios = final_choice.measure_final(session, [first, pair, later], rounds=2,
                                                timer=_forward_timer(sessions), alike=alike)
    # whole steps warmed up: the first plan's (4 + 1 forwards) and the pair's (4 + 2); then
    # each round those and the blocks where ``first`` and ``later`` differ, kept and
    # recomputed, alone, in rotating order
    alone = alike[blocks[0]].session
    assert len(sessions) == 2 + 2 * 4
    assert [s is session for s in sessions[:6]] == [True, True, False, False, True, True]
    assert {id(s) for s in sessions} == {id(session), id(alone)}
    # ``later``'s step composed: the first plan's 5 + its blocks' (1 + 2 + 2) - the first's
    # (2 + 1 + 1) = 6, what its whole step runs (4 + 2)
    assert ratios == [1.0, 6 / 5, 6 / 5]
    assert chosen is first  # the best-predicted and the measured fastest: no duel


def test_one_plan_is_not_measured(monkeypatch):
    calls = []
    monkeypatch.setattr(Session, "step", lambda *a: calls.append(a) or 1.0)
    only = _plan(["keep"], 1, 0.0)
    assert final_choice.measure_final(Session(None, {}, (), None), [only], rounds=3) == (only, [1.0])
    assert not calls


@pytest.mark.parametrize("bad", [-1, 1.5, True, "2"])
def test_final_rounds_checked(bad):
    with pytest.raises(ValueError, match="final_rounds"):
        pr.planner.plan(_model(), paddle.randn([2, 16]), budget=0.5, final_rounds=bad)


class _Scripted:
    """A plan whose steps take the scripted seconds, in order; the steps are logged."""

    def __init__(self, name: str, extra_s: float, seconds: list, log: list):
        self.name, self.extra_s, self.seconds, self.log = name, extra_s, list(seconds), log

    @contextlib.contextmanager
    def apply(self):
        self.log.append(self.name)
        yield

    def step(self) -> float:
        return self.seconds.pop(0)  # IndexError: more steps than scripted


def _measure(plans: list, rounds: int = 3):
    current = {}

    def timer(session):
        return current["plan"].step()

    for p in plans:  # the timer reads the plan applied last
        original = p.apply

        @contextlib.contextmanager
        def apply(original=original, p=p):
            current["plan"] = p
            with original():
                yield

        p.apply = apply
    chosen, ratios = final_choice.measure_final(Session(None, {}, (), None), plans, rounds=rounds,
                                                timer=timer)
    assert all(not p.seconds for p in plans), "every scripted step was taken"
    return chosen, ratios


def test_a_lucky_leader_loses_the_duel():
    # the case of the twice-listed model: the solver's ``ops`` point (predicted faster) and
    # the run rerun whole; three rounds put the run ahead by chance, fresh paired rounds do not
    log: list = []
    ops = _Scripted("ops", 1.0, [9, 1.0, 1.0, 1.0] + [1.0], log)
    run = _Scripted("run", 2.0, [9, 0.9, 0.9, 0.9] + [1.1], log)
    chosen, ratios = _measure([ops, run])
    assert ratios == [1.0, 0.9]  # the run leads the rounds
    assert chosen is ops  # without the duel the run was returned
    # rounds in rotating order, then the duel, stopped at its first loss
    assert log == ["ops", "run", "run", "ops", "ops", "run", "run", "ops"] + ["ops", "run"]


def test_a_leader_faster_beyond_the_noise_wins_the_duel():
    log: list = []
    ops = _Scripted("ops", 1.0, [9, 1.0, 1.0, 1.0] + [1.0] * 6, log)
    run = _Scripted("run", 2.0, [9, 0.9, 0.9, 0.9] + [0.95] * 6, log)
    chosen, _ = _measure([ops, run])
    assert chosen is run
    assert len(log) == 8 + 2 * 6  # six paired rounds, all won


def test_five_wins_of_six_keep_the_prediction():
    log: list = []
    ops = _Scripted("ops", 1.0, [9, 1.0, 1.0, 1.0] + [1.0] * 6, log)
    run = _Scripted("run", 2.0, [9, 0.9, 0.9, 0.9] + [0.9] * 5 + [1.2], log)
    chosen, _ = _measure([ops, run])
    assert chosen is ops  # a loss in the last round: 5 of 6 is within the noise (p = 0.109)


def test_a_tie_counts_against_the_challenger():
    log: list = []
    ops = _Scripted("ops", 1.0, [9, 1.0, 1.0, 1.0] + [1.0] * 4, log)
    run = _Scripted("run", 2.0, [9, 0.9, 0.9, 0.9] + [0.9] * 3 + [1.0], log)
    chosen, _ = _measure([ops, run])
    assert chosen is ops and len(log) == 8 + 2 * 4  # stopped at the tie in its fourth round


def test_no_duel_when_the_best_predicted_leads():
    log: list = []
    # the solver's plan first, but another predicted faster (a greedy solver's case) leads
    solver = _Scripted("solver", 2.0, [9, 1.0, 1.0, 1.0], log)
    cheap = _Scripted("cheap", 1.0, [9, 0.9, 0.8, 0.9], log)
    slow = _Scripted("slow", 3.0, [9, 1.5, 1.5, 1.5], log)
    chosen, ratios = _measure([solver, cheap, slow])
    assert chosen is cheap and ratios == [1.0, 0.9, 1.5]
    assert len(log) == 3 * 4


def test_the_best_predicted_is_the_incumbent_not_the_first():
    log: list = []
    solver = _Scripted("solver", 2.0, [9, 0.9, 0.9, 0.9] + [1.1], log)
    cheap = _Scripted("cheap", 1.0, [9, 1.0, 1.0, 1.0] + [1.0], log)
    chosen, _ = _measure([solver, cheap])
    assert chosen is cheap  # the solver's plan led but lost the duel to the best-predicted
    assert log[8:] == ["cheap", "solver"]


def test_duel_wins_is_the_sign_tests_threshold():
    for n in range(1, 13):
        def tail(w, n=n):
            return sum(math.comb(n, k) for k in range(w, n + 1)) / 2 ** n

        need = final_choice.duel_wins(n, 0.05)
        assert need == n + 1 or tail(need) <= 0.05
        assert tail(need - 1) > 0.05
    assert final_choice.duel_wins() == 6


def test_the_anchors_own_blocks_are_timed_too():
    # the first plan's configuration of a block (its ``a`` alone recomputed) that no other
    # plan has is timed too: a composed plan's time takes the anchor's block sum from it
    session, alike = _paired_blocks()
    first = Plan(budget=100, baseline_bytes=100, predicted_bytes=0, extra_s=0.1, forward_s=1.0,
                 choices=[BlockChoice("0.0.a", "sub", "sub:a", 0, 0.0, ("0.0.a",))],
                 layers={"0.0.a": session.table["0.0.a"]})
    pair = _choice_plan(session, ["0"], 0.3)
    later = _choice_plan(session, ["0.0"], 0.2)
    sessions: list = []
    chosen, ratios = final_choice.measure_final(session, [first, pair, later], rounds=2,
                                                timer=_forward_timer(sessions), alike=alike)
    # whole steps of the first plan (4 forwards: ``a`` reruns, the block does not) and of
    # the pair's (4 + 2), warmed up once; block 0.0 alone with ``a`` recomputed (1) and
    # whole (2)
    assert len(sessions) == 2 + 2 * 4
    # ``later``: 4 + 2 - 1 = 5 forwards, what its whole step runs (4 + 1)
    assert ratios == [1.0, 6 / 4, 5 / 4]
    assert chosen is first


def test_a_duel_of_composed_plans_times_their_blocks_alone():
    # the first plan (``a`` of block 0.0 recomputed) leads; the best-predicted (block 0.0
    # recomputed whole) defends: both composed of blocks, so the duel times only their
    # blocks alone, even though a third plan (around a pair of blocks) needed whole steps
    session, alike = _paired_blocks()
    first = Plan(budget=100, baseline_bytes=100, predicted_bytes=0, extra_s=0.2, forward_s=1.0,
                 choices=[BlockChoice("0.0.a", "sub", "sub:a", 0, 0.0, ("0.0.a",))],
                 layers={"0.0.a": session.table["0.0.a"]})
    pair = _choice_plan(session, ["0"], 0.3)
    whole_block = _choice_plan(session, ["0.0"], 0.1)
    sessions: list = []
    chosen, _ = final_choice.measure_final(session, [first, pair, whole_block], rounds=2,
                                           timer=_forward_timer(sessions), alike=alike)
    assert chosen is first  # 1 forward against 2 in every paired round: 7 wins
    duel = sessions[2 + 2 * 4:]  # after the whole steps' warm-up and two rounds
    assert len(duel) == 2 * 6 and all(s is alike["0.0"].session for s in duel)


def test_a_duel_skips_the_blocks_both_plans_configure_alike():
    # the solver's plan (block 0 recomputed, block 1's ``a``) against the leader (block 0's
    # ``a``, block 1 kept): each takes ``a`` recomputed on one block, which cancels, so the
    # duel times only block 0 whole and kept
    model = _model()
    x = paddle.randn([8, 16])
    x.stop_gradient = False
    session = _session(model, x, list(model))
    alike = alike_blocks(session)

    def plan(choices, extra):
        picked = [BlockChoice(t, k, k, 0, 0.0, (t,)) for t, k in choices]
        return Plan(budget=100, baseline_bytes=100, predicted_bytes=0, extra_s=extra,
                    forward_s=1.0, choices=picked, layers={t: session.table[t] for t, _ in choices})

    solver = plan([("0", "full"), ("1.a", "sub")], 0.1)
    leader = plan([("0.a", "sub")], 0.2)
    kept = plan([], 0.3)
    sessions: list = []
    chosen, ratios = final_choice.measure_final(session, [solver, leader, kept], rounds=2,
                                                timer=_forward_timer(sessions), alike=alike)
    assert ratios == [1.0, 2 / 3, 2 / 3]  # block forwards: 2 + 1, 1 + 1, 1 + 1
    assert chosen is leader  # 1 forward against 2 on block 0 in every paired round
    # three configurations a round (recomputed, ``a`` recomputed, kept), then 2 a duel round
    assert len(sessions) == 3 * 2 + 2 * 6
    assert all(s is alike["0"].session for s in sessions)


def test_plans_are_timed_only_when_predicted_near_the_least():
    # kept when predicted within SLOWER of the least extra time, left out beyond, whether
    # timed in whole steps or composed of blocks; the first plan always stays
    session, _ = _paired_blocks()
    first = _choice_plan(session, ["0.0"], 0.2)
    near = _choice_plan(session, ["0"], 0.2 * (final_choice.SLOWER - 0.05))
    far = _choice_plan(session, ["1"], 0.2 * (final_choice.SLOWER + 0.05))
    blocks_near = _choice_plan(session, ["1.0", "1.1"], 0.2 * (final_choice.SLOWER - 0.05))
    blocks_far = _choice_plan(session, ["1.0"], 0.2 * (final_choice.SLOWER + 0.05))
    assert final_choice.worth_timing([first, near, far, blocks_near, blocks_far]) == [
        first, near, blocks_near]
    slow_first = _choice_plan(session, ["0.0"], 1.0)  # the least need not be the first's
    assert final_choice.worth_timing([slow_first, near, far]) == [slow_first, near, far]
    assert final_choice.worth_timing([first, far]) == [first]


def test_plan_leaves_out_plans_predicted_slow(monkeypatch):
    # plan() shortlists, then drops what worth_timing drops, before the final measurement
    model = _model()
    x = paddle.randn([8, 16])
    x.stop_gradient = False
    seen: dict = {}

    def worth(plans):
        seen["given"] = len(plans)
        return plans[:1]

    def measured(session, plans, rounds, timer=None, alike=None):
        seen["measured"] = len(plans)
        return plans[0], [1.0] * len(plans)

    monkeypatch.setattr("paddle_recompute._planner.plan.make.worth_timing", worth)
    monkeypatch.setattr("paddle_recompute._planner.plan.make.measure_final", measured)
    pr.planner.plan(model, x, budget=0.6, blocks=list(model), options=["keep", "full"],
                    final_rounds=2)
    assert seen == {"given": 2, "measured": 1}
