"""Planner options that are selective regions: measured bytes are the bytes held, plans exact."""

import gc
import warnings

import numpy as np
import paddle
import pytest
from _plan_apply import offered_points
from _rc_helpers import lm_step
from paddle import nn
from paddle.base import core

import paddle_recompute as pr
from paddle_recompute import policies
from paddle_recompute._bench import harness as gpt_model
from paddle_recompute._entry import recompute as _entry
from paddle_recompute._planner.harness import Session
from paddle_recompute._planner.options.policy_frame import measured_regions
from paddle_recompute._selective.frame import PolicyFrame
from paddle_recompute.testing import assert_tensors_equal, snapshot_grads

CFG = gpt_model.GPTConfig(vocab=64, hidden=32, heads=2, blocks=4, seq=32, batch=4, dropout=0.1)
SELECTIVE = policies.save_any_of(policies.save_matmuls_except_scores, policies.save_dropout_masks)


def _allocated():
    return core.host_memory_stat_current_value("Allocated", 0)


@pytest.mark.parametrize("policy", [SELECTIVE, policies.save_dropout_masks, policies.save_matmuls,
                                    policies.save_all, policies.recompute_all],
                         ids=["selective", "masks", "save_matmuls", "save_all", "recompute_all"])
def test_a_region_knows_the_bytes_it_holds(policy):
    paddle.seed(0)
    block = gpt_model.Block(CFG)
    x = paddle.randn([CFG.batch, CFG.seq, CFG.hidden])
    x.stop_gradient = False
    with measured_regions() as finished:
        gc.collect()
        before = _allocated()
        out = pr.recompute(block, x, use_reentrant=False, policy=policy)
        held = _allocated() - before - out.size * out.element_size()
    (frame,) = finished
    assert frame.held_bytes() == held  # the allocator counts requested bytes: exact
    out.sum().backward()
    assert frame.rerun_ns > 0 or policy is policies.save_all  # save_all never reruns




def test_policy_options_are_measured_once_and_plans_hold_what_they_predict():
    model, _ = gpt_model.build(CFG, "none")
    tokens, targets = gpt_model.synthetic_batch(CFG, 0)
    prof = pr.planner.profile(model, tokens, repeats=1)
    rng, grads = paddle.get_rng_state(), snapshot_grads(model)
    pr.planner.plan(model, tokens, budget=1.0, profile=prof, options=("keep", "policy:selective"))
    # the measurement changes nothing: random state and parameters' .grad as before
    np.testing.assert_array_equal(paddle.get_rng_state()[0].current_seed(), rng[0].current_seed())
    assert_tensors_equal(snapshot_grads(model), grads)
    held, seconds = prof.policy_costs["blocks.0"]["policy:selective"]
    assert 0 < held < prof.layers["blocks.0"].saved_bytes and seconds > 0
    inputs = prof.layers["blocks.0"].input_bytes
    plan = pr.planner.plan(model, tokens, profile=prof, options=("keep", "policy:selective"),
                   budget=prof.outside_bytes + CFG.blocks * (inputs + held))
    assert [c.kind for c in plan.choices] == ["policy:selective"] * CFG.blocks
    loss_ref, grads_ref = lm_step(model, tokens, targets)
    with plan.apply():
        gc.collect()
        before = _allocated()
        out = model(tokens)
        used = _allocated() - before - out.size * out.element_size()
        del out
        loss, grads = lm_step(model, tokens, targets)
    assert used == plan.predicted_bytes
    assert loss == loss_ref
    assert_tensors_equal(grads, grads_ref)


def test_register_policy_option_checks_its_arguments():
    with pytest.raises(TypeError, match="`policy` must be callable"):
        pr.planner.register_policy_option("policy:bad", "save_matmuls")
    with pytest.raises(TypeError, match="kind"):
        pr.planner.register_policy_option("", policies.save_matmuls)


def test_a_policy_kind_that_fails_is_left_out_with_a_warning():
    calls = []

    def broken(info):
        calls.append(info)
        raise ValueError("no such tensor")

    pr.planner.register_policy_option("policy:broken", broken)
    try:
        model, _ = gpt_model.build(CFG, "none")
        tokens, _ = gpt_model.synthetic_batch(CFG, 0)
        options = ("keep", "full", "policy:broken")
        with pytest.warns(UserWarning, match="'policy:broken' left out.*no such tensor"):
            plan = pr.planner.plan(model, tokens, budget=0.5, options=options)
        assert {c.kind for c in plan.choices} <= {"keep", "full"}
        assert _entry._POLICY_FRAMES.make is PolicyFrame  # the measurement's frames are gone
        assert calls and all(plan.profile.policy_costs[b]["policy:broken"] is None
                             for b in plan.profile.blocks)
        # the failure is remembered: a later plan on the profile neither runs nor offers it
        before = len(calls)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            again = pr.planner.plan(model, tokens, budget=0.3, options=options, profile=plan.profile)
        assert len(calls) == before and {c.kind for c in again.choices} <= {"keep", "full"}
    finally:
        from paddle_recompute._planner.options import kinds as _plan_options
        from paddle_recompute._planner.options import policies as _plan_policies

        del _plan_options._KINDS["policy:broken"], _plan_policies.POLICY_KINDS["policy:broken"]


def test_an_operator_point_that_fails_is_left_out_and_not_run_again(monkeypatch):
    """A point whose measured run fails is offered nowhere (it was offered with the model's
    cost while the warning said "left out"), and a later plan does not run it again."""
    from paddle_recompute._planner.options import ops as op_options

    runs = []
    model, _ = gpt_model.build(CFG, "none")
    tokens, _ = gpt_model.synthetic_batch(CFG, 0)
    prof = pr.planner.profile(model, tokens)

    def failing_wrap(forward, policy):
        graph = prof.op_profiles[policy.block].graph
        if not sum(graph.ops[j].nbytes for j in policy.keep):  # ops:0, holding nothing, runs
            return op_options.recompute_forward(forward, policy=policy)

        def fails(*args, **kwargs):
            runs.append(policy)
            raise RuntimeError("this point cannot run")
        return fails

    monkeypatch.setattr(op_options, "_wrap", failing_wrap)
    with warnings.catch_warnings(record=True) as caught:  # one warning per failed point
        warnings.simplefilter("always")
        plan = pr.planner.plan(model, tokens, budget=0.5, options=("keep", "full", "ops"),
                               final_rounds=0, profile=prof)
    said = {str(w.message).split("'")[1] for w in caught}
    assert all("this point cannot run" in str(w.message) for w in caught) and "ops:1" in said
    costs = plan.profile.policy_costs[plan.profile.blocks[0]]
    failed = {k for k, v in costs.items() if v is None}
    assert runs and failed == said and costs["ops:0"] is not None
    assert all(c.option not in failed for c in plan.choices)
    before = len(runs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = pr.planner.plan(model, tokens, budget=0.7, options=("keep", "full", "ops"),
                                final_rounds=0, profile=plan.profile)
    new = {k for k, v in plan.profile.policy_costs[plan.profile.blocks[0]].items() if v is None} - failed
    # only this budget's own new point (NOTE [ Budget points ]) ran: it failed at its first block
    assert len(new) <= 1 and len(runs) - before == len(new)
    assert [str(w.message).split("'")[1] for w in caught] == sorted(new)
    assert all(c.option not in failed | new for c in again.choices)


def test_region_options_are_priced_against_the_rounds_median_references(monkeypatch):
    """Seconds: the median rerun over the rounds, plus one forward extra for the block (the
    median over every option and round of its forward less the median plain forward, never
    below 0: NOTE [ Region forward ]), x the clock scale (profiled rerun / median reference
    rerun).  Bytes: the most held.  One round's references do not move that round's price."""
    from paddle_recompute._planner.options import policies as po

    rounds = iter(range(100))
    plain = [0.30, 0.50, 0.40]  # the block's plain forward, per round: median 0.40
    reference = [1.0, 2.0, 0.5]  # the block's rerun in a recompute_all region: median 1.0
    regions = {  # per option, per round: (held, rerun, forward)
        "A": [(100, 0.2, 0.35), (120, 0.4, 0.45), (110, 0.1, 0.70)],  # reruns: median 0.2
        "B": [(50, 0.6, 0.40), (60, 0.5, 0.42), (55, 0.7, 0.41)],  # reruns: median 0.6
    }
    current = [0]
    measured_steps = []

    def fake_plain(session, units):
        current[0] = next(rounds)
        return {"b": plain[current[0]]}

    def fake_measure(session, wraps):
        measured_steps.append(wraps["b"])
        return {"b": [regions[wraps["b"]][current[0]]]}

    monkeypatch.setattr(po, "_plain_forwards", fake_plain)
    monkeypatch.setattr(po, "_measure", fake_measure)
    monkeypatch.setattr(po, "_reference_reruns", lambda *a: {"b": reference[current[0]]})
    monkeypatch.setattr(po, "unit_rerun_s", lambda prof, block: 0.5)  # the profiled rerun

    class Prof:
        blocks = ["b"]
        policy_costs: dict = {}

    session = Session(None, {}, (), Prof)
    session.params = ["p"]  # a trainable parameter: the options are measured
    po.measure_options(session, {"opt": {"b": "A"}, "other": {"b": "B"}}, rounds=3)
    # forwards less the median plain one: A -0.05, 0.05, 0.30; B 0.0, 0.02, 0.01: median 0.015
    # (A's own would be 0.05: one option's three rounds are not the block's figure)
    extra = 0.015
    held, seconds = Prof.policy_costs["b"]["opt"]
    assert held == 120 and seconds == pytest.approx((0.2 + extra) * 0.5 / 1.0)
    held, seconds = Prof.policy_costs["b"]["other"]
    assert held == 60 and seconds == pytest.approx((0.6 + extra) * 0.5 / 1.0)
    assert sorted(measured_steps) == ["A"] * 3 + ["B"] * 3  # one step per round per option


def test_the_region_forward_extra_is_never_below_zero():
    from paddle_recompute._planner.options import policies as po

    samples = {"opt": {"b": [[(0, 0.1, 0.2)], [(0, 0.1, 0.25)]]}}
    assert po._forward_extras(samples, {"b": [0.3, 0.4]}) == {"b": 0.0}
    assert po._forward_extras(samples, {"b": [0.1, 0.2]}) == {"b": pytest.approx(0.075)}
    assert po._forward_extras(samples, {}) == {}  # no plain forward of the block: none


class _TableBlock(nn.Layer):
    """Multiplies by a view of a non-persistable buffer (as a rotary table is read)."""

    def __init__(self, d=64):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.register_buffer("table", paddle.rand([64, d]), persistable=False)

    def forward(self, x):
        return paddle.tanh(self.lin(x) * self.table.unsqueeze(0))


class _TableNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = nn.LayerList([_TableBlock() for _ in range(3)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x.mean()


def test_a_kept_view_of_a_layer_buffer_costs_nothing_in_the_operator_model():
    """NOTE [ Kept bytes ]: the buffer is alive anyway, so keeping the ``unsqueeze`` of it
    holds nothing, and every offered point's modelled bytes equal the measured ones (the
    model counted the whole table, 16 KiB, before)."""
    paddle.seed(0)
    net = _TableNet()
    x = paddle.randn([4, 64, 64])
    x.stop_gradient = False
    prof = pr.planner.plan(net, x, budget=0.5, options=["ops"], final_rounds=0).profile
    graph = prof.op_profiles["blocks.0"].graph
    assert [(o.name, o.nbytes) for o in graph.ops][:2] == [("linear", 4 * 64 * 64 * 4), ("unsqueeze", 0)]
    compared = 0
    for block, model_bytes, measured, policy in offered_points(prof):
        assert measured == model_bytes, (block, policy)
        compared += 1
    assert compared >= 2 * len(prof.blocks)
