"""Mixtures of experts train exactly under full and selective recompute: PaddleFormers'
``GptOssForCausalLM`` and Paddle's incubate ``MoELayer``.

Routing is data-dependent: which experts run, and on how many tokens, changes with the batch
(checked here), and each step's batch differs, so the rerun in backward must route as its
forward did.  Every test counts the experts' calls to prove the rerun ran.
"""

import _real_models as rm
import numpy as np
import paddle
import pytest
from _moe_cpu import routing_on_cpu
from paddle import nn
from paddle.incubate.distributed.models.moe import MoELayer

import paddle_recompute as pr
from paddle_recompute import apply_recompute_granularity, policies
from paddle_recompute.testing import assert_loss_parity, recompute_sublayers

STEPS = 3


def _count_calls(layers) -> list:
    """A one-element list counting calls of ``layers`` (a forward pre-hook each; hooks run
    in reruns too, since a region reruns the layer's ``__call__``)."""
    calls = [0]

    def count(_layer, _inputs):
        calls[0] += 1

    for layer in layers:
        layer.register_forward_pre_hook(count)
    return calls


def _parity(build_model, step, setup, *, rerun=True):
    """Train without and with ``setup``: exact, and with ``rerun`` every call of an expert
    happens twice with recompute (forward and rerun), else once."""
    counted = {}

    def build(recompute: bool):
        model, experts = build_model()
        counted[recompute] = _count_calls(experts)
        if recompute:
            setup(model)
        return model, paddle.optimizer.SGD(0.1, parameters=model.parameters())

    assert_loss_parity(build, step, steps=STEPS)
    assert counted[True][0] == (2 if rerun else 1) * counted[False][0] > 0, counted


# --------------------------------------------------------------------------- GptOss

pytestmark_lm = pytest.mark.skipif(not rm.paddleformers_available(), reason="needs paddleformers")


def _gpt_oss():
    model = rm.lm("gpt_oss", dropout=0.1)
    return model, [layer.mlp.experts for layer in model.model.layers]


def _lm_step(model, _optimizer, i):
    ids, labels = rm.lm_batch(i)
    loss = rm.loss_of(model(input_ids=ids, labels=labels))
    loss.backward()
    return loss


def _routes(model, batches) -> list:
    """Per batch: the router's expert choices in every layer, as numpy arrays."""
    seen = []
    for layer in model.model.layers:
        layer.mlp.router.register_forward_post_hook(lambda _l, _i, out: seen.append(out[1].numpy()))
    routes = []
    with paddle.no_grad():
        for ids in batches:
            seen.clear()
            model(input_ids=ids)
            routes.append(list(seen))
    return routes


@pytestmark_lm
def test_gpt_oss_routing_changes_with_the_batch():
    model, _ = _gpt_oss()
    first, second = _routes(model, [rm.lm_batch(0)[0], rm.lm_batch(1)[0]])
    assert len(first) == len(model.model.layers)
    for a, b in zip(first, second, strict=True):
        assert not np.array_equal(a, b)
        # tokens per expert differ too: the experts' loop runs on other slices
        assert not np.array_equal(np.bincount(a.ravel(), minlength=4), np.bincount(b.ravel(), minlength=4))


@pytestmark_lm
def test_gpt_oss_full_recompute_trains_exactly(use_reentrant):
    def setup(model):
        recompute_sublayers(model, rm.block_names(model), use_reentrant=use_reentrant)

    _parity(_gpt_oss, _lm_step, setup)


@pytestmark_lm
def test_gpt_oss_own_full_recompute_through_patch_paddle(use_reentrant, never_left_patched):
    """The model's own ``recompute_granularity="full"`` path calls Paddle's ``recompute``;
    ``patch_paddle`` routes it here."""

    def setup(model):
        config = model.config
        config.recompute_granularity, config.recompute_method = "full", "uniform"
        config.recompute_num_layers, config.recompute_use_reentrant = 1, use_reentrant

    with pr.paddle_patched():
        _parity(_gpt_oss, _lm_step, setup)


SELECTIVE = {
    "policy:save_matmuls_except_scores_and_masks": lambda m: recompute_sublayers(
        m, rm.block_names(m), use_reentrant=False, policy=policies.save_matmuls_except_scores_and_masks),
    "policy:save_all_but_attention_core": lambda m: recompute_sublayers(
        m, rm.block_names(m), use_reentrant=False, policy=policies.save_all_but_attention_core),
    "policy:save_matmuls": lambda m: recompute_sublayers(
        m, rm.block_names(m), use_reentrant=False, policy=policies.save_matmuls),
    "preset:full": lambda m: [apply_recompute_granularity(b, "full") for b in rm.blocks_of(m)],
    "preset:selective": lambda m: [apply_recompute_granularity(b, "selective") for b in rm.blocks_of(m)],
}


@pytestmark_lm
@pytest.mark.parametrize("setup", SELECTIVE)
def test_gpt_oss_selective_recompute_trains_exactly(setup):
    _parity(_gpt_oss, _lm_step, SELECTIVE[setup])


@pytestmark_lm
@pytest.mark.parametrize("granularity", ["full_attn", "core_attn"])
def test_gpt_oss_attention_presets_leave_the_experts_alone(granularity):
    """The attention presets cover attention only: exact, and the experts never rerun."""
    _parity(_gpt_oss, _lm_step,
            lambda m: [apply_recompute_granularity(b, granularity) for b in rm.blocks_of(m)],
            rerun=False)


# --------------------------------------------------------------------------- Paddle's MoELayer

D, EXPERTS = 8, 4


class Solo:
    """A one-rank model-parallel group, for ``recompute_ctx['mp_group']``."""

    nranks, rank = 1, 0


class Expert(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(D, 2 * D), nn.Linear(2 * D, D)

    def forward(self, x):
        return self.fc2(nn.functional.gelu(self.fc1(x)))


class MoEBlock(nn.Layer):
    """Pre-norm residual block around Paddle's ``MoELayer`` (``MoELayer`` reshapes its input
    in place, so the region is the block, whose norm makes that input)."""

    def __init__(self, gate: str, recompute_interval: int = 0):
        super().__init__()
        self.norm = nn.LayerNorm(D)
        self.moe = MoELayer(D, nn.LayerList([Expert() for _ in range(EXPERTS)]),
                            gate={"type": gate, "top_k": 2}, recompute_interval=recompute_interval,
                            recompute_ctx={"mp_group": Solo(), "offload": False, "partition": False})

    def forward(self, x):
        return x + self.moe(self.norm(x))


class MoENet(nn.Layer):
    def __init__(self, gate: str, recompute_interval: int = 0):
        super().__init__()
        self.embed = nn.Linear(D, D)
        self.blocks = nn.LayerList([MoEBlock(gate, recompute_interval) for _ in range(2)])
        self.head = nn.Linear(D, D)

    def forward(self, x):
        x = self.embed(x)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def _moe(gate, recompute_interval=0):
    def build():
        paddle.seed(0)
        model = MoENet(gate, recompute_interval)
        return model, [e for b in model.blocks for e in b.moe.experts]
    return build


def _moe_batch(i):
    """Step 1's batch is one token: two experts get it, the others do not run at all."""
    shape = [1, 1, D] if i == 1 else [2, 6, D]
    return paddle.to_tensor(np.random.default_rng(i).standard_normal(shape).astype("float32"))


def _moe_step(model, _optimizer, i):
    loss = model(_moe_batch(i)).square().mean()
    loss.backward()
    return loss


def test_cpu_routing_stand_ins_give_paddles_documented_results():
    """The examples in the docstrings of ``paddle.distributed.models.moe.utils`` (run there
    on GPU only)."""
    import _moe_cpu as cpu

    def t(values):
        return paddle.to_tensor(values, dtype="int64")

    numbers = t([[0, 2], [0, 2]])
    assert cpu.number_count(numbers, 6).tolist() == [2, 0, 2, 0, 0, 0]
    assert cpu.assign_pos(numbers, paddle.cumsum(t([2, 0, 2, 0]))).tolist() == [2, 0, 3, 1]
    assert cpu.limit_by_capacity(t([1, 2, 2, 8, 3, 6]), t([5, 5, 5]), 2).tolist() == [1, 2, 2, 4, 3, 3]
    assert cpu.prune_gate_by_capacity(t([1, 3, 3, 3, 3, 2, 1, 1]), t([0, 3, 1, 3, 0, 0, 0, 0]),
                                      8, 1).tolist() == [1, 3, 3, 3, -1, 2, 1, 1]
    kept = cpu.random_routing(t([[0, 1], [2, 3]]), paddle.to_tensor([[0.6, 0.3], [0.9, 0.1]]),
                              paddle.to_tensor([0.5, 0.5]))
    assert kept.tolist() == [[0, 1], [2, -1]]  # 2 * 0.3 >= 0.5 keeps, 2 * 0.1 < 0.5 drops


@pytest.fixture
def moe_on_cpu():
    with routing_on_cpu():
        yield


GATES = ["naive", "gshard"]  # gshard drops tokens by capacity and draws random routing


@pytest.mark.usefixtures("moe_on_cpu")
@pytest.mark.parametrize("gate", GATES)
def test_moe_layer_routing_changes_with_the_batch(gate):
    model, experts = _moe(gate)()
    tokens = [{}]  # per batch: expert -> tokens it got
    for k, expert in enumerate(experts):
        expert.register_forward_post_hook(
            lambda _l, inputs, _o, k=k: tokens[-1].__setitem__(k, inputs[0].shape[0]))
    for i in range(3):
        model(_moe_batch(i))
        tokens.append({})
    assert tokens[0] and tokens[0] != tokens[2], tokens  # tokens per expert differ
    assert len(tokens[1]) < len(experts), tokens  # and which experts run at all


MOE_SETUPS = {
    "full:reentrant": lambda m: recompute_sublayers(m, ["blocks.0", "blocks.1"], use_reentrant=True),
    "full:non_reentrant": lambda m: recompute_sublayers(m, ["blocks.0", "blocks.1"], use_reentrant=False),
    "policy:save_matmuls": lambda m: recompute_sublayers(
        m, ["blocks.0", "blocks.1"], use_reentrant=False, policy=policies.save_matmuls),
    "policy:save_matmuls_except_scores_and_masks": lambda m: recompute_sublayers(
        m, ["blocks.0", "blocks.1"], use_reentrant=False,
        policy=policies.save_matmuls_except_scores_and_masks),
    "policy:recompute_all": lambda m: recompute_sublayers(
        m, ["blocks.0", "blocks.1"], use_reentrant=False, policy=policies.recompute_all),
    "preset:full": lambda m: [apply_recompute_granularity(b, "full") for b in m.blocks],
    "preset:selective": lambda m: [apply_recompute_granularity(b, "selective") for b in m.blocks],
}


@pytest.mark.usefixtures("moe_on_cpu")
@pytest.mark.parametrize("setup", MOE_SETUPS)
@pytest.mark.parametrize("gate", GATES)
def test_moe_layer_trains_exactly(gate, setup):
    _parity(_moe(gate), _moe_step, MOE_SETUPS[setup])


@pytest.mark.usefixtures("moe_on_cpu")
@pytest.mark.parametrize("gate", GATES)
def test_moe_layers_own_recompute_through_patch_paddle(gate, never_left_patched):
    """``MoELayer(recompute_interval=1)`` recomputes its experts with Paddle's
    ``recompute_hybrid`` (bound at import); patched, it runs ours, exactly (Paddle's own
    refuses CPU: "Recompute with RNG is not support current device")."""
    counted = {}

    def build(recompute: bool):
        model, experts = _moe(gate, recompute_interval=1 if recompute else 0)()
        counted[recompute] = _count_calls(experts)
        return model, paddle.optimizer.SGD(0.1, parameters=model.parameters())

    with pr.paddle_patched():
        assert_loss_parity(build, _moe_step, steps=STEPS)
    assert counted[True][0] == 2 * counted[False][0] > 0, counted
