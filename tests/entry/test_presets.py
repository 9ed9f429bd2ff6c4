"""Transformer presets (``apply_recompute_granularity``): parity, what reruns, memory order."""

import gc

import paddle
import pytest
from _op_counts import counting_ops
from _rc_helpers import requires_grad, seed_all
from paddle import nn
from paddle.base import core

from paddle_recompute import apply_recompute_granularity
from paddle_recompute._bench import harness as gpt_model  # noqa: E402
from paddle_recompute.testing import assert_tensors_equal

GRANULARITIES = ["none", "full", "full_attn", "core_attn", "selective"]
SMALL = gpt_model.GPTConfig(vocab=64, hidden=32, heads=4, blocks=2, seq=16, batch=2, dropout=0.2)


def encoder_layer(normalize_before):
    return nn.TransformerEncoderLayer(32, 4, 64, dropout=0.2, normalize_before=normalize_before)


BLOCKS = {
    "encoder_post_ln": lambda: encoder_layer(False),
    "encoder_pre_ln": lambda: encoder_layer(True),
    "gpt": lambda: gpt_model.Block(SMALL),
}


def _grads(kind, granularity, steps=2):
    seed_all()
    block = BLOCKS[kind]()
    apply_recompute_granularity(block, granularity)
    x = requires_grad(paddle.randn([SMALL.batch, SMALL.seq, 32]))
    out = None
    for _ in range(steps):  # a second step: the preset stays in place and dropout moves on
        out = block(x)
        (out * out).sum().backward()
    return [out, x.grad, *(p.grad for p in block.parameters())]


@pytest.mark.parametrize("granularity", GRANULARITIES[1:])
@pytest.mark.parametrize("kind", list(BLOCKS))
def test_parity(kind, granularity):
    assert_tensors_equal(_grads(kind, granularity), _grads(kind, "none"))


@pytest.mark.parametrize("kind", list(BLOCKS))
@pytest.mark.parametrize("granularity, attention_runs, linear_runs", [
    ("none", 1, None),
    ("full", 2, None),
    ("full_attn", 2, None),
    ("core_attn", 2, 0),  # the attention reruns, but its projections are skipped
    ("selective", 2, 0),  # so do the MLP's: every linear output is kept
])
def test_what_reruns(kind, granularity, attention_runs, linear_runs):
    block = BLOCKS[kind]()
    # A sublayer inside the attention counts its runs (hooks on the attention layer itself
    # run in its __call__, outside the region).
    inner = block.attn.qkv if kind == "gpt" else block.self_attn.q_proj
    runs = []
    inner.register_forward_pre_hook(lambda layer, args: runs.append(1))
    apply_recompute_granularity(block, granularity)
    x = requires_grad(paddle.randn([SMALL.batch, SMALL.seq, 32]))
    out = block(x)
    with counting_ops("linear") as counts:
        (out * out).sum().backward()
    assert len(runs) == attention_runs
    if linear_runs is not None:
        assert counts["linear"] == linear_runs


def test_full_attn_keeps_the_mlp():
    block = gpt_model.Block(SMALL)
    mlp_runs = []
    block.mlp.register_forward_pre_hook(lambda layer, args: mlp_runs.append(1))
    apply_recompute_granularity(block, "full_attn")
    out = block(requires_grad(paddle.randn([2, 16, 32])))
    out.sum().backward()
    assert len(mlp_runs) == 1


def _allocated():
    return core.host_memory_stat_current_value("Allocated", 0)


def _held(granularity):
    cfg = gpt_model.GPTConfig(vocab=64, hidden=64, heads=4, blocks=3, seq=64, batch=4, dropout=0.1)
    seed_all()
    blocks = [gpt_model.Block(cfg) for _ in range(cfg.blocks)]
    for b in blocks:
        apply_recompute_granularity(b, granularity)
    x = requires_grad(paddle.randn([cfg.batch, cfg.seq, cfg.hidden]))
    gc.collect()
    gc.disable()
    try:
        before = _allocated()
        h = x
        for b in blocks:
            h = b(h)
        held = _allocated() - before
    finally:
        gc.enable()
    h.sum().backward()
    return held


def test_memory_order():
    held = {g: _held(g) for g in GRANULARITIES}
    assert held["full"] < held["full_attn"] < held["core_attn"] < held["none"], held
    assert held["full"] < held["selective"] < held["core_attn"], held


def test_state_dict_keys_unchanged_and_undo():
    block = encoder_layer(True)
    keys = list(block.state_dict())
    apply_recompute_granularity(block, "core_attn")
    assert list(block.state_dict()) == keys
    assert "forward" in vars(block.self_attn)
    apply_recompute_granularity(block, "none")
    assert "forward" not in vars(block.self_attn) and "forward" not in vars(block)


@pytest.mark.parametrize("granularity", ["full", "full_attn", "core_attn", "selective"])
def test_preset_returns_the_handle_that_undoes_it_on_exit(granularity):
    import paddle_recompute as pr

    block = encoder_layer(True)
    with apply_recompute_granularity(block, granularity) as handle:
        assert isinstance(handle, pr.planner.Applied) and len(handle.layers) == 1
        assert any("forward" in vars(layer) for layer in block.sublayers(include_self=True))
    assert not any("forward" in vars(layer) for layer in block.sublayers(include_self=True))
    handle.remove()  # idempotent
    assert isinstance(apply_recompute_granularity(block, "none"), pr.planner.Applied)


def test_reapplying_replaces_the_preset():
    block = gpt_model.Block(SMALL)
    apply_recompute_granularity(block, "full")
    apply_recompute_granularity(block, "full_attn")
    assert "forward" not in vars(block) and "forward" in vars(block.attn)


def test_errors():
    with pytest.raises(TypeError, match="paddle.nn.Layer"):
        apply_recompute_granularity(lambda x: x, "full")
    with pytest.raises(ValueError, match="granularity"):
        apply_recompute_granularity(encoder_layer(True), "attention")
    with pytest.raises(ValueError, match="no attention sublayer"):
        apply_recompute_granularity(nn.Sequential(nn.Linear(2, 2)), "core_attn")
    with pytest.raises(ValueError, match="no sublayer 'attention'"):
        apply_recompute_granularity(gpt_model.Block(SMALL), "full_attn", attention="attention")
    with pytest.raises(ValueError, match="use_reentrant"):
        apply_recompute_granularity(encoder_layer(True), "full", use_reentrant=True)
