"""The operator-level option on blocks whose operators depend on the batch (NOTE [ Operator
sequences that vary ] in ``_selective/op_policy.py``): a top-1 mixture of experts, profiled
on a batch where one expert gets no tokens, planned with ``ops``, then trained on batches
where other experts get none: exact, the regions rerun, unprofiled calls warned about once."""

import collections
import contextlib
import dataclasses
import random
import warnings

import _real_models as rm
import numpy as np
import paddle
import pytest
from _rc_helpers import RunCount
from paddle import nn

import paddle_recompute as pr
from paddle_recompute.policies import OpPolicy
from paddle_recompute.testing import snapshot_grads

D, E, TOKENS = 32, 4, 24
# experts that get tokens: the profiled batch, then the three training batches (the last
# runs more expert calls than were profiled)
ROUTES = [(0, 1, 2), (0, 1, 3), (1, 2), (0, 1, 2, 3)]


class Expert(nn.Layer):
    def __init__(self):
        super().__init__()
        self.up, self.down = nn.Linear(D, 2 * D), nn.Linear(2 * D, D)

    def forward(self, x):
        return self.down(nn.functional.gelu(self.up(x)))


class MoE(nn.Layer):
    """Top-1 routing; an expert with no tokens runs no operators (as PaddleFormers' experts)."""

    calls = RunCount()  # forward runs, reruns included

    def __init__(self):
        super().__init__()
        self.norm, self.gate = nn.LayerNorm(D), nn.Linear(D, E)
        with paddle.no_grad():  # the batch's route hint (feature e for expert e) decides
            self.gate.weight.set_value(self.gate.weight * 0.1 + 3 * paddle.eye(D, E))
        self.experts = nn.LayerList([Expert() for _ in range(E)])

    def forward(self, x):
        self.calls += 1
        h = self.norm(x)
        prob = nn.functional.softmax(self.gate(h), -1)
        top = paddle.argmax(prob, -1)
        out = paddle.zeros_like(h)
        for e, expert in enumerate(self.experts):
            idx = paddle.nonzero(top == e).flatten()
            if idx.shape[0] == 0:
                continue
            y = expert(paddle.gather(h, idx)) * paddle.gather(prob[:, e], idx).unsqueeze(-1)
            out = paddle.scatter(out, idx, y, overwrite=True)
        return x + out


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = nn.LayerList([MoE() for _ in range(2)])
        self.head = nn.Linear(D, 1)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return (self.head(x) ** 2).mean()


def _net():
    paddle.seed(0)
    return Net()


def _batch(step):
    """Tokens routed to the experts ``ROUTES[step]`` (a large route-hint feature each)."""
    paddle.seed(100 + step)
    x = paddle.randn([TOKENS, D])
    experts = ROUTES[step]
    hint = paddle.to_tensor([experts[i % len(experts)] for i in range(TOKENS)])
    return x + 8 * nn.functional.one_hot(hint, D)


def _routes(model, x):
    with paddle.no_grad():
        top = paddle.argmax(model.blocks[0].gate(model.blocks[0].norm(x)), -1).numpy()
    return tuple(sorted(set(top.tolist())))


def _train(model, steps, plan=None):
    """Loss, gradients and parameters after each step of SGD on ``_batch(1..steps)``."""
    opt = paddle.optimizer.SGD(0.01, parameters=model.parameters())
    out = []
    ctx = pr.planner.apply_plan(model, plan) if plan is not None else None
    try:
        for step in range(1, steps + 1):
            assert _routes(model, _batch(step)) == ROUTES[step]
            loss = model(_batch(step))
            loss.backward()
            grads = snapshot_grads(model)
            opt.step()
            opt.clear_grad()
            out.append((loss.numpy(), grads, {k: p.numpy() for k, p in model.named_parameters()}))
    finally:
        if ctx is not None:
            ctx.remove()
    return out


def _assert_same_training(got, ref):
    """Every step's loss, gradients and parameters bit-equal."""
    assert len(got) == len(ref)
    for (loss_a, grads_a, params_a), (loss_b, grads_b, params_b) in zip(ref, got, strict=True):
        np.testing.assert_array_equal(loss_b, loss_a)
        assert grads_b.keys() == grads_a.keys() and params_b.keys() == params_a.keys()
        for k in grads_a:
            np.testing.assert_array_equal(grads_b[k], grads_a[k], err_msg=k)
        for k in params_a:
            np.testing.assert_array_equal(params_b[k], params_a[k], err_msg=k)


@pytest.fixture(scope="module")
def planned():
    model = _net()
    plan = pr.planner.plan(model, _batch(0), budget=0.5, options=["ops"], final_rounds=0)
    return model, plan


def test_the_batches_route_differently():
    model = _net()
    assert [_routes(model, _batch(s)) for s in range(4)] == ROUTES


def test_the_plan_uses_operator_policies_keyed_by_occurrence(planned):
    _, plan = planned
    assert {c.kind for c in plan.choices} == {"ops"}
    assert all(isinstance(c.payload, OpPolicy) and c.payload.by_occurrence for c in plan.choices)
    assert any(c.payload.keep for c in plan.choices)  # a point between keep and full
    assert all(len(c.payload.keep) < len(c.payload.ops) for c in plan.choices)  # so they rerun


def test_trains_exactly_on_batches_routed_otherwise(planned):
    """Loss, every gradient and every parameter bit-equal to no recompute over 3 steps whose
    routing differs from the profiled batch's (an expert profiled without tokens gets some:
    its calls are recomputed, warned about once per policy), and each block reruns."""
    _, plan = planned
    ref = _train(_net(), 3)
    model = _net()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = _train(model, 3, plan)
    _assert_same_training(got, ref)
    assert [b.calls for b in model.blocks] == [6, 6]  # forward and rerun, each step
    unprofiled = [str(w.message) for w in caught if "beyond the calls its profile has" in str(w.message)]
    blocks = [m.split("block ")[1].split(" ")[0] for m in unprofiled]
    assert blocks and len(blocks) == len(set(blocks)), unprofiled  # once per policy


def _with_keeps(plan, keeps):
    """``plan`` with each block's policy keeping ``keeps[i]`` (positions) instead."""
    return dataclasses.replace(plan, choices=type(plan.choices)(
        dataclasses.replace(c, payload=dataclasses.replace(c.payload, keep=frozenset(k)))
        for c, k in zip(plan.choices, keeps, strict=True)))


def test_any_operator_choice_trains_exactly_on_batches_routed_otherwise(planned):
    """Which operators a plan keeps depends on the machine's timings: every choice must train
    exactly. Seeded random choices, and the one that keeps each expert's ``nonzero`` (an
    expert without tokens then leaves out a ``flatten`` whose output holds no data)."""
    _, plan = planned
    ops = plan.choices[0].payload.ops
    nonzero = [p for p, name in enumerate(ops) if name == "nonzero"][:-1]
    rng = random.Random(0)
    choices = [[nonzero, []]] + [
        [[p for p in range(len(ops)) if rng.random() < share] for _ in plan.choices]
        for share in (0.2, 0.5, 0.8) for _ in range(4)]
    ref = _train(_net(), 3)
    for keeps in choices:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # calls beyond the profile's: tested above
            _assert_same_training(_train(_net(), 3, _with_keeps(plan, keeps)), ref)


def test_a_policy_by_occurrence_is_a_value():
    a = OpPolicy(("linear", "gelu", "linear"), frozenset({2}), block="moe", by_occurrence=True)
    b = OpPolicy.from_dict(a.to_dict())
    assert a == b and hash(a) == hash(b) and b.by_occurrence
    assert a != OpPolicy(("linear", "gelu", "linear"), frozenset({2}), block="moe")
    assert repr(a) == "OpPolicy('moe': keep 1, offload 0 of 3 operators, by occurrence)"


def test_an_operator_never_profiled_still_raises():
    """Another operator is another code path, not another routing: as by position."""
    lin = nn.Linear(4, 4)
    x = paddle.randn([2, 4])
    x.stop_gradient = False
    other = OpPolicy(("tanh",), frozenset({0}), block="moe", by_occurrence=True)
    with pytest.raises(pr.RecomputeError, match=r"block 'moe' ran operator #0 'linear'"):
        pr.recompute(lin, x, use_reentrant=False, policy=other)


def _gpt_oss_batch(tokens):
    ids = paddle.to_tensor([tokens], dtype="int64")
    return {"input_ids": ids, "labels": ids}


# PaddleFormers' GptOss (4 experts, top 2): the profiled batch, then three training batches;
# each decoder layer's experts loop over the experts that got tokens
GPT_OSS_BATCHES = [[1, 2], [7, 11], [9, 60], [5, 6, 7]]


def _gpt_oss_routes(model, tokens):
    """The experts each decoder layer's router picks for ``tokens``."""
    routes = []
    hooks = [layer.mlp.router.register_forward_post_hook(
        lambda _, __, out: routes.append(tuple(sorted(set(out[1].numpy().flatten().tolist())))))
        for layer in model.model.layers]
    with paddle.no_grad():
        model(**_gpt_oss_batch(tokens))
    for h in hooks:
        h.remove()
    return routes


def _gpt_oss_train(model, plan=None):
    """As ``_train``, on ``GPT_OSS_BATCHES[1:]``; also how often each layer's experts ran."""
    runs = collections.Counter()
    hooks = [layer.mlp.experts.register_forward_pre_hook(lambda _, __, i=i: runs.update([i]))
             for i, layer in enumerate(model.model.layers)]
    opt = paddle.optimizer.SGD(0.01, parameters=model.parameters())
    out = []
    try:
        with pr.planner.apply_plan(model, plan) if plan is not None else contextlib.nullcontext():
            for tokens in GPT_OSS_BATCHES[1:]:
                loss = rm.loss_of(model(**_gpt_oss_batch(tokens)))
                loss.backward()
                grads = snapshot_grads(model)
                opt.step()
                opt.clear_grad()
                out.append((loss.numpy(), grads, {k: p.numpy() for k, p in model.named_parameters()}))
    finally:
        for h in hooks:
            h.remove()
    return out, runs


@pytest.mark.skipif(not rm.paddleformers_available(), reason="needs paddleformers")
def test_gpt_oss_plans_with_operator_policies_and_trains_exactly():
    """PaddleFormers' GptOss, planned with ``ops`` on one batch, trains bit-exactly on three
    batches whose experts differ from the profiled batch's, its planned layers rerunning."""
    def fresh():
        paddle.seed(0)
        return rm.lm("gpt_oss", layers=1)

    routes = [_gpt_oss_routes(fresh(), tokens) for tokens in GPT_OSS_BATCHES]
    assert all(r != routes[0] for r in routes[1:]), routes
    model = fresh()
    plan = pr.planner.plan(model, budget=0.5, options=["ops"], final_rounds=0,
                           **_gpt_oss_batch(GPT_OSS_BATCHES[0]))
    assert plan.choices and {c.kind for c in plan.choices} == {"ops"}
    assert all(c.payload.by_occurrence and c.payload.keep for c in plan.choices)
    ref, ref_runs = _gpt_oss_train(fresh())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # more expert calls than profiled: tested above
        got, runs = _gpt_oss_train(fresh(), plan)
    _assert_same_training(got, ref)
    assert [c.block for c in plan.choices] == ["model.layers.0"]
    assert ref_runs == {0: 3} and runs == {0: 6}  # forward and rerun, each step
