"""Paddle's fused kernels in the policies (``policies.FUSED_OPS``): every name is a real
``paddle._C_ops`` operator, each kind is answered as its unfused operators are, the kernels
with CPU kernels train exactly in regions, and the GPU-only ones do fail on CPU."""

import _real_models as rm
import numpy as np
import paddle
import paddle.incubate.nn.functional as IF
import paddle.nn.functional as F
import pytest
from _op_counts import counting_ops
from _rc_helpers import assert_matches_plain, requires_grad
from paddle import _C_ops, nn

from paddle_recompute import apply_recompute_granularity, policies
from paddle_recompute._core import ops as _ops
from paddle_recompute._selective.fused_ops import KINDS
from paddle_recompute.testing import recompute_sublayers

POLICIES = {
    "recompute_all": policies.recompute_all,
    "save_all": policies.save_all,
    "save_matmuls": policies.save_matmuls,
    "save_matmuls_no_batch": policies.save_matmuls_no_batch,
    "save_matmuls_except_scores": policies.save_matmuls_except_scores,
    "save_matmuls_except_scores_and_masks": policies.save_matmuls_except_scores_and_masks,
    "save_all_but_attention_core": policies.save_all_but_attention_core,
}
# The kinds each policy keeps (NOTE [ Fused operators ]): what the README's table says.
KEEPS = {
    "recompute_all": set(),
    "save_all": set(KINDS),
    "save_matmuls": {"matmul", "attention_core"},
    "save_matmuls_no_batch": {"matmul"},
    "save_matmuls_except_scores": {"matmul", "attention_core"},
    "save_matmuls_except_scores_and_masks": {"matmul", "attention_core"},
    "save_all_but_attention_core": {"matmul", "norm", "activation"},
}
CPU_OPS = sorted(name for name, op in policies.FUSED_OPS.items() if op.cpu)
GPU_OPS = sorted(name for name, op in policies.FUSED_OPS.items() if not op.cpu)


def _r(*shape, dtype="float32"):
    return requires_grad(paddle.randn(shape).astype(dtype))


# --------------------------------------------------------------------------- the table


@pytest.mark.parametrize("name", sorted(policies.FUSED_OPS))
def test_every_fused_name_is_an_operator_regions_observe(name):
    """A kernel renamed in a later Paddle fails here, not silently in a policy."""
    assert name in vars(_C_ops), f"{name} is not in paddle._C_ops"
    assert name in _ops.ORIGINALS  # the wrappers of policy regions cover it
    assert policies.FUSED_OPS[name].kind in KINDS


def _info(name):
    """What a policy is told about a fused kernel's output (a weight matmul's shapes for
    the matmuls, as ``fused_gemm_epilogue`` gets them)."""
    shapes = ((2, 5, 8), (8, 8)) if policies.FUSED_OPS[name].kind == "matmul" else ((2, 5, 2, 4),) * 3
    return policies.PolicyInfo(name, None, 0, paddle.zeros([2, 5, 8]), shapes)


@pytest.mark.parametrize("policy", POLICIES)
def test_each_policy_answers_by_kind(policy):
    for name, op in policies.FUSED_OPS.items():
        assert bool(POLICIES[policy](_info(name))) is (op.kind in KEEPS[policy]), (policy, name, op.kind)


def test_the_named_kernels_have_the_kinds_of_what_they_fuse():
    kind = {name: op.kind for name, op in policies.FUSED_OPS.items()}
    assert {n: kind[n] for n in ("flash_attn", "flashmask_attention", "fused_rms_norm_ext", "swiglu",
                                 "fused_rotary_position_embedding", "fused_gemm_epilogue",
                                 "fused_bias_dropout_residual_layer_norm",
                                 "fused_linear_param_grad_add")} == {
        "flash_attn": "attention_core", "flashmask_attention": "attention_core",
        "fused_rms_norm_ext": "norm", "swiglu": "activation",
        "fused_rotary_position_embedding": "elementwise", "fused_gemm_epilogue": "matmul",
        "fused_bias_dropout_residual_layer_norm": "norm", "fused_linear_param_grad_add": "matmul"}
    assert "fused_linear_param_grad_add" in policies.MATMUL_OPS


# --------------------------------------------------------------------------- GPU-only kernels

_QKV = (1, 4, 2, 8)  # batch, sequence, heads, head dim
GPU_CALLS = {
    "flash_attn": lambda: _C_ops.flash_attn(_r(*_QKV), _r(*_QKV), _r(*_QKV), None, None, 0.0, True,
                                            False, False, "")[0],
    "flash_attn_unpadded": lambda: F.flash_attention.flash_attn_unpadded(
        _r(4, 2, 8), _r(4, 2, 8), _r(4, 2, 8), paddle.to_tensor([0, 4], "int32"),
        paddle.to_tensor([0, 4], "int32"), 4, 4, 0.35)[0],
    "flashmask_attention": lambda: _C_ops.flashmask_attention(
        _r(*_QKV), _r(*_QKV), _r(*_QKV), paddle.zeros([1, 1, 4, 1], "int32"), None, 0.0, True,
        False, False, "")[0],
    "memory_efficient_attention": lambda: _C_ops.memory_efficient_attention(
        _r(*_QKV), _r(*_QKV), _r(*_QKV), None, None, None, None, None, 4, 4, True, 0.0, -1.0, True)[0],
    "variable_length_memory_efficient_attention": lambda: IF.variable_length_memory_efficient_attention(
        _r(1, 2, 4, 8), _r(1, 2, 4, 8), _r(1, 2, 4, 8), paddle.to_tensor([[4]], "int32"),
        paddle.to_tensor([[4]], "int32")),
    "fused_softmax_mask_upper_triangle": lambda: paddle.incubate.softmax_mask_fuse_upper_triangle(
        _r(1, 2, 4, 4)),
    "fused_rms_norm_ext": lambda: IF.fused_rms_norm_ext(_r(4, 8), _r(8), 1e-6)[0],
    "fused_rms_norm_quant": lambda: IF.fused_rms_norm(_r(4, 8), _r(8), _r(8), 1e-6, 1)[0],
    "rms_norm": lambda: F.rms_norm(_r(4, 8), [8], _r(8), 1e-6),
    "fused_bias_dropout_residual_layer_norm": lambda: IF.fused_bias_dropout_residual_layer_norm(
        _r(2, 4, 8), _r(2, 4, 8), _r(8), _r(8), _r(8), dropout_rate=0.1),
    "fused_bias_act": lambda: IF.fused_bias_act(_r(4, 8), _r(8), act_method="gelu"),
    "fused_rotary_position_embedding": lambda: IF.fused_rotary_position_embedding(
        _r(*_QKV), _r(*_QKV), None, use_neox_rotary_style=True)[0],
    "fused_dropout_add": lambda: _C_ops.fused_dropout_add(_r(4, 8), _r(4, 8), None, 0.3, False,
                                                          "upscale_in_train", 0, False)[0],
    "fused_gemm_epilogue": lambda: IF.fused_linear(_r(4, 8), _r(8, 6), _r(6)),
    "fused_linear_param_grad_add": lambda: _C_ops.fused_linear_param_grad_add(
        _r(4, 8), _r(4, 6), None, None, True, True)[0],
}


def test_every_gpu_only_kernel_has_a_call_here():
    assert sorted(GPU_CALLS) == GPU_OPS


@pytest.mark.parametrize("name", GPU_OPS)
def test_gpu_only_kernels_fail_on_cpu(name):
    """The table's ``cpu=False`` is checked, not assumed: forward or backward raises on CPU
    (``fused_rms_norm_quant`` has a CPU forward and no CPU backward)."""
    with pytest.raises((RuntimeError, NotImplementedError), match="not registered|GPU|not supported"):
        GPU_CALLS[name]().sum().backward()


# --------------------------------------------------------------------------- CPU kernels in regions


class FusedBlock(nn.Layer):
    """linear, then one fused kernel, then linear: the kernel's inputs and output need grad."""

    def __init__(self, name):
        super().__init__()
        self.op = name
        self.fc_in = nn.Linear(8, 16)
        self.fc_out = nn.Linear(8 if name == "swiglu" else 16, 8)

    def forward(self, x):
        h = self.fc_in(x)
        if self.op == "swiglu":
            h = F.swiglu(h)  # silu(h[..., :8]) * h[..., 8:]
        elif self.op == "fused_softmax_mask":
            scores = h.reshape([x.shape[0], 1, 4, 4 * x.shape[1]]).transpose([0, 1, 3, 2])[:, :, :4]
            mask = paddle.triu(paddle.full([x.shape[0], 1, 4, 4], -1e4), 1)
            h = h * paddle.incubate.softmax_mask_fuse(scores, mask).sum()
        return self.fc_out(h)


def _make(name):
    def make():
        block = FusedBlock(name)
        x = _r(4, 4, 8)
        return block, (x,), {}, [x, *block.parameters()]
    return make


def test_every_cpu_kernel_has_a_block_here():
    assert CPU_OPS == ["fused_softmax_mask", "swiglu"]


@pytest.mark.parametrize("name", CPU_OPS)
def test_cpu_kernels_in_plain_regions_match_bit_for_bit(name, use_reentrant):
    assert_matches_plain(_make(name), use_reentrant=use_reentrant)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", CPU_OPS)
def test_cpu_kernels_are_kept_or_recomputed_by_kind(name, policy):
    """Gradients equal no recompute bit for bit, and the kernel runs again in backward
    exactly when its kind is not kept."""
    asked = []

    def watched(info):
        answer = POLICIES[policy](info)
        if info.op == name:
            asked.append(answer)
        return answer

    with counting_ops(name) as counts:
        assert_matches_plain(_make(name), use_reentrant=False, policy=watched)
    kept = policies.FUSED_OPS[name].kind in KEEPS[policy]
    assert asked and all(bool(a) is kept for a in asked), asked
    # forward of the plain call is not observed; the region's forward once, its rerun once more
    assert counts[name] == (1 if kept else 2), dict(counts)


# --------------------------------------------------------------------------- presets


class SelfAttention(nn.Layer):
    """Attention with the fused masked softmax (``softmax_mask_fuse``)."""

    def __init__(self, width=8, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)

    def forward(self, x):
        b, s, w = x.shape
        q, k, v = self.qkv(x).reshape([b, s, 3, self.heads, w // self.heads]).transpose([2, 0, 3, 1, 4])
        mask = paddle.triu(paddle.full([b, 1, s, s], -1e4), 1)
        probs = paddle.incubate.softmax_mask_fuse(paddle.matmul(q, k, transpose_y=True), mask)
        return self.proj(paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([b, s, w]))


class Block(nn.Layer):
    """Pre-norm block: fused masked softmax in attention, SwiGLU in the MLP."""

    def __init__(self, width=8):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.self_attn = SelfAttention(width)
        self.up, self.down = nn.Linear(width, 4 * width), nn.Linear(2 * width, width)

    def forward(self, x):
        x = x + self.self_attn(self.norm1(x))
        return x + F.dropout(self.down(F.swiglu(self.up(self.norm2(x)))), p=0.2)


# kernel runs in a step under each preset: 1 when kept or outside the region, 2 when rerun
PRESET_RUNS = {
    "core_attn": {"fused_softmax_mask": 2},  # the MLP is outside the attention region
    "selective": {"fused_softmax_mask": 2, "swiglu": 2},
}


@pytest.mark.parametrize("granularity", ["full", "full_attn", "core_attn", "selective"])
def test_presets_with_fused_kernels_train_exactly(granularity):
    def make(preset):
        paddle.seed(3)
        block = Block()
        if preset:
            apply_recompute_granularity(block, granularity)
        return block

    def step(block):
        paddle.seed(11)
        x = _r(2, 5, 8)
        block(x).square().mean().backward()
        return [x.grad.numpy()] + [p.grad.numpy() for p in block.parameters()]

    plain = step(make(False))
    with counting_ops("fused_softmax_mask", "swiglu") as counts:
        recomputed = step(make(True))
    for a, b in zip(plain, recomputed, strict=True):
        np.testing.assert_array_equal(a, b)
    assert dict(counts) == PRESET_RUNS.get(granularity, {}), dict(counts)


# --------------------------------------------------------------------------- PaddleFormers


# swiglu runs in a 2-step, 2-layer step: counted inside policy regions only (forward, rerun)
LLAMA_SWIGLU_RUNS = {"selective": 2 * 2 * 2, "core_attn": 0,  # the MLP is outside attention
                     "save_all_but_attention_core": 2 * 2}  # kept: the forward's only


@pytest.mark.skipif(not rm.paddleformers_available(), reason="needs paddleformers")
@pytest.mark.parametrize("setup", ["full", "selective", "core_attn", "save_all_but_attention_core"])
def test_paddleformers_fused_swiglu_trains_exactly(setup):
    """PaddleFormers' MLP with ``fuse_swiglu`` calls ``paddle.nn.functional.swiglu``, the one
    fused kernel of its CPU path: kept or rerun as an activation, gradients exact."""

    def apply(model):
        if setup in POLICIES:
            recompute_sublayers(model, rm.block_names(model), use_reentrant=False,
                                policy=POLICIES[setup])
            return
        for block in rm.blocks_of(model):
            apply_recompute_granularity(block, setup)

    with counting_ops("swiglu") as counts:
        rm.lm_parity("llama", apply, config={"fuse_swiglu": True})
    assert counts["swiglu"] == LLAMA_SWIGLU_RUNS.get(setup, 0), dict(counts)
