"""The planner's operator-level option on real models: recorded graphs, policies keyed by
operator position, plans saved, loaded and applied to freshly built models."""

import contextlib
import gc
import pathlib

import _real_models as rm
import paddle
import pytest
from _plan_apply import offered_points
from paddle.base import core

import paddle_recompute as pr
from paddle_recompute import planner
from paddle_recompute.__main__ import main
from paddle_recompute._planner.options import ops as op_options
from paddle_recompute._planner.options.kinds import candidates_for
from paddle_recompute._planner.profile import measure as planner_profile
from paddle_recompute.policies import OpPolicy

pytestmark = pytest.mark.skipif(not rm.paddleformers_available(), reason="needs paddleformers")


def _llama(layers=2, seed=0):
    paddle.seed(seed)
    return rm.lm("llama", dropout=0.1, layers=layers)


def _kwargs(step=0):
    ids, labels = rm.lm_batch(step)
    return {"input_ids": ids, "labels": labels}


def _held(model) -> int:
    """Bytes a forward holds for backward (as tests/real_models/test_real_models_plan.py)."""
    kwargs = _kwargs()  # made outside the window: the loss keeps the ids (its labels)
    gc.collect()
    before = core.host_memory_stat_current_value("Allocated", 0)
    out = model(**kwargs)
    held = core.host_memory_stat_current_value("Allocated", 0) - before
    held -= planner_profile.nbytes_of(out)
    rm.loss_of(out).backward()
    model.clear_gradients()
    return held


def test_op_policy_rejects_operators_it_did_not_profile():
    lin = paddle.nn.Linear(4, 4)
    x = paddle.randn([2, 4])
    x.stop_gradient = False
    other = OpPolicy(("tanh",), frozenset({0}), block="model.layers.3")
    with pytest.raises(pr.RecomputeError, match=r"block 'model.layers.3' ran operator #0 'linear'"):
        pr.recompute(lin, x, use_reentrant=False, policy=other)
    short = OpPolicy((), block="blk")
    with pytest.raises(pr.RecomputeError, match="only 0 operators"):
        pr.recompute(lin, x, use_reentrant=False, policy=short)
    assert not planner_profile._hooks._STACKS  # no frame left behind after the error


def test_op_policy_is_a_value():
    a = OpPolicy(("linear", "gelu"), frozenset({0}), block="b")
    assert a == OpPolicy.from_dict(a.to_dict()) and hash(a) == hash(OpPolicy.from_dict(a.to_dict()))
    assert repr(a) == "OpPolicy('b': keep 1, offload 0 of 2 operators)"
    with pytest.raises(ValueError, match="outside"):
        OpPolicy(("linear",), frozenset({3}))


def test_decoder_layers_share_one_recorded_graph():
    model = _llama(layers=3)
    plan = planner.plan(model, budget=0.5, options=["ops"], **_kwargs())
    graphs = {id(plan.profile.op_profiles[b].graph) for b in plan.profile.blocks}
    assert len(graphs) == 1  # same operators, bytes and slots: one graph, one solve
    op_prof = plan.profile.op_profiles["model.layers.0"]
    assert op_prof.blocks == ("model.layers.0", "model.layers.1", "model.layers.2")
    names = [o.name for o in op_prof.graph.ops]
    assert "matmul" in names or "linear" in names
    assert "softmax" in names
    assert op_prof.graph.slots and all(o.time > 0 for o in op_prof.graph.ops)
    cands = candidates_for(plan.profile.layers["model.layers.0"], plan.profile, ("ops",))
    assert len(cands) > 2 and all(isinstance(c.payload, OpPolicy) for c in cands)
    kept = [sum(op_prof.graph.ops[j].nbytes for j in c.payload.keep) for c in cands]
    assert kept == sorted(set(kept)) and kept[0] == 0  # frontier points, from recomputing all


def test_each_offered_point_holds_the_bytes_its_model_predicts():
    """NOTE [ Kept bytes ]: a kept dropout holds its mask too, and a kept view of a region
    input (the causal mask) holds nothing more; the graph's bytes say so, exactly."""
    model = _llama()
    plan = planner.plan(model, budget=0.5, options=["ops"], final_rounds=0, **_kwargs())
    prof = plan.profile
    graph = prof.op_profiles["model.layers.0"].graph
    compared = kept_dropout = 0
    for block, model_bytes, measured, policy in offered_points(prof):
        assert measured == model_bytes, (block, policy, measured, model_bytes)
        compared += 1
        kept_dropout += any(graph.ops[j].name == "dropout" for j in policy.keep)
    assert compared >= 2 * len(prof.blocks) and kept_dropout  # the mask's case was compared


def test_a_plan_offers_and_measures_the_point_that_fits_each_blocks_share():
    """NOTE [ Budget points ]: the fastest point within a block's share of the budget is
    offered and measured; a later plan on the profile measures only its own new point."""
    model = _llama()
    plan = planner.plan(model, budget=0.5, options=["ops"], final_rounds=0, **_kwargs())
    prof = plan.profile
    inputs = (sum(prof.layers[b].input_bytes for b in prof.blocks)
              - sum(n * (len(blocks) - 1) for n, blocks in prof.shared_inputs))
    assert prof.shared_inputs  # the RoPE tables and the mask every layer takes
    share = (plan.budget - prof.outside_bytes - inputs) // len(prof.blocks)
    op_prof = prof.op_profiles["model.layers.0"]
    assert op_prof.targets == (share,)
    best = op_options._frontier(op_prof.graph).best(share)
    offered = [op_options._point(prof, "model.layers.0", i)[1]
               for i in range(len(op_options._points(op_prof)))]
    assert any(p.keep == best.keep for p in offered)
    assert all(f"ops:{i}" in prof.policy_costs[b] for b in prof.blocks for i in range(len(offered))
               if op_options.offered(prof, b, i))
    measured = {b: dict(prof.policy_costs[b]) for b in prof.blocks}
    again = planner.plan(model, budget=0.3, options=["ops"], final_rounds=0, profile=prof,
                         **_kwargs())
    assert len(again.profile.op_profiles["model.layers.0"].targets) == 2
    for b in prof.blocks:  # earlier points kept their measurement; at most one new one
        assert {k: v for k, v in prof.policy_costs[b].items() if k in measured[b]} == measured[b]
        assert len(prof.policy_costs[b]) - len(measured[b]) <= 1


def test_inputs_every_block_takes_are_counted_once():
    """NOTE [ Shared block inputs ]: regions around all three layers hold the RoPE tables and
    the mask once; the plan's prediction says so (without the credit it is 3.3 KB high)."""
    model = _llama(layers=3)
    _held(model)
    none = _held(model)
    blocks = [f"model.layers.{i}" for i in range(3)]
    plan = planner.plan(model, budget=0.5, blocks=blocks, options=["full"], final_rounds=0,
                        **_kwargs())
    assert [c.option for c in plan.choices] == ["full"] * 3
    assert len(plan.profile.shared_inputs) >= 2
    with plan.apply(model):
        _held(model)
        held = _held(model)
    assert held < none
    # exact but for the loss: PaddleFormers' ``masked_lm_loss / loss_mask.sum()`` saves its
    # output for backward, so the profile counts those 4 bytes, and ``_held`` subtracts them
    # as the forward's output (the 124 bytes once left here were the 128-byte ids, made
    # inside the window and kept by the loss as its labels)
    assert held == plan.predicted_bytes - 4, (held, plan.predicted_bytes)


@pytest.mark.parametrize("budget", [0.6, 0.3])
def test_ops_plan_trains_exactly_and_holds_what_it_predicts(budget):
    model = _llama()
    _held(model)
    none = _held(model)
    plan = planner.plan(model, budget=budget, options=["ops"], **_kwargs())
    assert {c.kind for c in plan.choices} == {"ops"}
    with plan.apply(model):
        held = _held(model)
    assert held < none
    # held bytes <= prediction (+ the region inputs shared by every layer, RoPE tables and
    # the mask, which the profile counts as each block's input): see test_real_models_plan
    assert held <= plan.predicted_bytes + 64 * 1024, (held, plan.predicted_bytes)
    rm.lm_parity("llama", lambda m: planner.apply_plan(m, plan), dropout=0.1)


def test_saved_plan_holds_the_same_bytes_on_a_fresh_model(tmp_path):
    model = _llama(seed=0)
    # ops alone: which kind wins depends on timings, and this test is about the ops payload
    plan = planner.plan(model, budget=0.4, options=["ops"], **_kwargs())
    kinds = {c.kind for c in plan.choices}
    assert kinds == {"ops"}
    with plan.apply(model):
        _held(model)
        original = _held(model)
    path = tmp_path / "plan.json"
    plan.save(path)
    loaded = planner.Plan.load(path)
    assert loaded.to_dict() == plan.to_dict()
    fresh = _llama(seed=1)
    with pytest.raises(ValueError, match="holds no layers"):
        loaded.apply()
    with loaded.apply(fresh):
        _held(fresh)
        assert _held(fresh) == original, kinds


def test_saved_plan_on_another_model_names_the_layer(tmp_path):
    plan = planner.plan(_llama(), budget=0.3, options=["ops", "full"], **_kwargs())
    path = tmp_path / "plan.json"
    plan.save(path)
    loaded = planner.Plan.load(path)
    with pytest.raises(ValueError, match=r"model.layers.1"):
        loaded.apply(_llama(layers=1))
    # The plan's regions come from measured times, so the first mismatched region may be the
    # decoder layer or one of its sublayers; the error must name whichever it is.
    with pytest.raises(ValueError, match=r"layer 'model\.layers\.0(\.\w+)*' is a \w+, but the plan"):
        loaded.apply(rm.lm("ernie4_5", layers=2))
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ValueError, match="not a plan saved by Plan.save"):
        planner.Plan.load(tmp_path / "bad.json")


LLAMA_TARGET = '''
import sys
sys.path.insert(0, {tests!r})
import _real_models as rm


def make():
    ids, labels = rm.lm_batch()
    return rm.lm("llama", dropout=0.1), {{"input_ids": ids, "labels": labels}}
'''


def test_plan_command_saves_a_plan_that_trains_exactly(tmp_path, capsys):
    path = tmp_path / "mk.py"
    path.write_text(LLAMA_TARGET.format(tests=str(pathlib.Path(__file__).parents[1])))
    out_json, png = tmp_path / "plan.json", tmp_path / "frontier.png"
    assert main(["plan", f"{path}:make", "--budget", "0.5", "-o", str(out_json),
                 "--plot", str(png)]) == 0
    text = capsys.readouterr().out
    assert "model.layers.1" in text and f"wrote {out_json}" in text
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    plan = planner.Plan.load(out_json)
    assert plan.budget <= plan.baseline_bytes // 2 and plan.predicted_bytes <= plan.budget
    rm.lm_parity("llama", lambda m: plan.apply(m), dropout=0.1)


@pytest.mark.parametrize("args, message", [
    (["--budget", "half"], "expected a fraction or bytes"),
    (["--budget", "1.5"], "must be in (0, 1]"),
    (["--budget", "0.5", "--options", "nope"], "option kind 'nope' is not registered"),
])
def test_plan_command_bad_arguments(args, message, tmp_path, capsys):
    path = tmp_path / "mk2.py"
    path.write_text(LLAMA_TARGET.format(tests=str(pathlib.Path(__file__).parents[1])))
    with contextlib.suppress(SystemExit):  # argparse exits 2 on a bad --budget type
        assert main(["plan", f"{path}:make", *args]) == 2
    assert message in capsys.readouterr().err


class _CalledTwice(paddle.nn.Layer):
    """``blocks.1`` runs twice per step on inputs of different sizes."""

    def __init__(self):
        super().__init__()
        self.blocks = paddle.nn.LayerList(
            [paddle.nn.Sequential(paddle.nn.Linear(8, 8), paddle.nn.Tanh()) for _ in range(2)])

    def forward(self, x):
        h = self.blocks[1](self.blocks[0](x))
        return h.sum() + self.blocks[1](h[:2]).sum()


def test_a_block_whose_calls_differ_gets_no_operator_option():
    model = _CalledTwice()
    x = paddle.randn([4, 8])
    x.stop_gradient = False
    # blocks without "keep": with it, blocks.0's points (it saves nothing of its own) would all be
    # beaten by keep and not offered (NOTE [ Points keep beats ])
    plan = planner.plan(model, x, budget=1.0, options=["full", "ops"], regions="blocks")
    assert set(plan.profile.op_profiles) == {"blocks.0"}
    assert candidates_for(plan.profile.layers["blocks.0"], plan.profile, ("ops",))
    assert not candidates_for(plan.profile.layers["blocks.1"], plan.profile, ("ops",))


def test_points_keep_beats_are_neither_measured_nor_offered(monkeypatch):
    """NOTE [ Points keep beats ]: a point predicted to hold at least what keeping the block
    holds costs a step per round and no plan can pick it: with ``keep`` offered it is not
    measured (counted in the options handed to ``measure_options``) nor offered."""
    from paddle_recompute._planner.options import policies

    measured_labels: list = []
    real = policies.measure_options

    def counting(session, options, *args, **kwargs):
        measured_labels.extend((label, unit) for label, wraps in options.items() for unit in wraps)
        return real(session, options, *args, **kwargs)

    monkeypatch.setattr("paddle_recompute._planner.options.alike.measure_options", counting)
    model = _llama()
    plan = planner.plan(model, budget=0.5, options=["keep", "full", "ops"], final_rounds=0,
                        **_kwargs())
    prof = plan.profile
    b = "model.layers.0"
    points = op_options._points(prof.op_profiles[b])
    row = prof.layers[b]
    beaten = [i for i in range(len(points))
              if row.input_bytes + op_options._point(prof, b, i)[0][0] >= row.saved_bytes]
    assert beaten  # the top point holds more than keeping the layer
    ops_measured = [label for label, unit in measured_labels if label.startswith("ops:")]
    assert len(ops_measured) == len(points) - len(beaten)  # one group of blocks alike, measured once
    assert all(f"ops:{i}" not in prof.policy_costs[b] for i in beaten)
    assert [i for i in range(len(points)) if not op_options.offered(prof, b, i)] == beaten
    offered_names = {c.name for c in candidates_for(row, prof, ("ops",))}
    assert offered_names == {f"ops:{i}" for i in range(len(points)) if i not in beaten}
