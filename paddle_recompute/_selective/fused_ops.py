"""Paddle's fused kernels, named by what they are (public as ``policies.FUSED_OPS``).

NOTE [ Fused operators ]
Large-model code on GPU (PaddleFormers, PaddleNLP, Paddle's fleet layers) calls fused
kernels where the reference code calls several small operators: one ``flash_attn`` for
scores, softmax, dropout and scores·V; one ``fused_rms_norm_ext`` for an RMSNorm; one
``swiglu`` for ``silu(gate) * up``.  A policy sees only the kernel's ``paddle._C_ops``
name, so each is given the kind of the work it does, and the policies answer by kind
exactly as they answer for the unfused operators:

* ``"matmul"``: a weight contraction (``fused_gemm_epilogue`` is ``x @ W + b`` with an
  activation).  Kept by every ``save_matmuls*`` policy and by
  ``save_all_but_attention_core``.
* ``"attention_core"``: scores, softmax, dropout and scores·V in one kernel; the output is
  the size of V (the unfused scores·V).  Kept by ``save_matmuls`` and
  ``save_matmuls_except_scores`` (which keep scores·V); recomputed by
  ``save_matmuls_no_batch`` (a batched contraction) and ``save_all_but_attention_core``.
* ``"softmax"``: the attention scores' softmax with its mask; recomputed by every
  ``save_matmuls*`` policy and ``save_all_but_attention_core``, as ``softmax`` is.
* ``"norm"``, ``"activation"``: recomputed by the ``save_matmuls*`` policies, kept by
  ``save_all_but_attention_core``, as ``layer_norm``/``rsqrt`` and ``silu``/``gelu`` are.
* ``"elementwise"``: memory-bound arithmetic (RoPE's rotation, dropout plus residual);
  recomputed by every built-in policy but ``save_all``, as the Tensor operators are.

``cpu`` says whether Paddle 3.3.1's CPU wheel trains with the kernel (forward and
backward kernels registered and working); the others raise on CPU, and
tests/test_fused_ops.py checks both sides, and that every name is in ``paddle._C_ops``.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["FusedOp", "FUSED_OPS", "KINDS", "fused_kind"]

KINDS = ("matmul", "attention_core", "softmax", "norm", "activation", "elementwise")


@dataclass(frozen=True)
class FusedOp:
    """One fused kernel: its kind, the Python API that reaches it, whether it trains on CPU."""

    kind: str
    api: str
    cpu: bool


_GPU, _CPU = False, True
FUSED_OPS = MappingProxyType({
    # attention core
    "flash_attn": FusedOp("attention_core", "paddle.nn.functional.flash_attention.flash_attention "
                          "(GPU; on CPU it runs matmul and softmax instead)", _GPU),
    "flash_attn_unpadded": FusedOp("attention_core",
                                   "paddle.nn.functional.flash_attention.flash_attn_unpadded", _GPU),
    "flashmask_attention": FusedOp("attention_core", "paddle.nn.functional.flashmask_attention", _GPU),
    "memory_efficient_attention": FusedOp(
        "attention_core", "paddle.incubate.nn.memory_efficient_attention.memory_efficient_attention",
        _GPU),
    "variable_length_memory_efficient_attention": FusedOp(
        "attention_core", "paddle.incubate.nn.functional.variable_length_memory_efficient_attention",
        _GPU),
    # the attention scores' softmax
    "fused_softmax_mask": FusedOp("softmax", "paddle.incubate.softmax_mask_fuse", _CPU),
    "fused_softmax_mask_upper_triangle": FusedOp(
        "softmax", "paddle.incubate.softmax_mask_fuse_upper_triangle", _GPU),
    # norms
    "fused_rms_norm_ext": FusedOp("norm", "paddle.incubate.nn.functional.fused_rms_norm_ext", _GPU),
    "fused_rms_norm_quant": FusedOp("norm", "paddle.incubate.nn.functional.fused_rms_norm "
                                    "(CPU has its forward kernel, not its backward)", _GPU),
    "rms_norm": FusedOp("norm", "paddle.nn.functional.rms_norm", _GPU),
    "fused_bias_dropout_residual_layer_norm": FusedOp(
        "norm", "paddle.incubate.nn.functional.fused_bias_dropout_residual_layer_norm", _GPU),
    # activations
    "swiglu": FusedOp("activation", "paddle.nn.functional.swiglu", _CPU),
    "fused_bias_act": FusedOp("activation", "paddle.incubate.nn.functional.fused_bias_act", _GPU),
    # elementwise
    "fused_rotary_position_embedding": FusedOp(
        "elementwise", "paddle.incubate.nn.functional.fused_rotary_position_embedding", _GPU),
    "fused_dropout_add": FusedOp("elementwise", "paddle.incubate.nn.functional.fused_dropout_add "
                                 "(in Paddle 3.3.1 it runs dropout and add instead)", _GPU),
    # matmuls
    "fused_gemm_epilogue": FusedOp("matmul", "paddle.incubate.nn.functional.fused_linear, "
                                   "fused_matmul_bias, fused_linear_activation", _GPU),
    "fused_linear_param_grad_add": FusedOp(
        "matmul", "Paddle's ColumnParallelLinear/RowParallelLinear backward "
        "(mp_fused_linear_param_grad_add)", _GPU),
})


def fused_kind(op: str) -> str | None:
    """The kind of fused operator ``op`` (a ``paddle._C_ops`` name), or None when not fused."""
    entry = FUSED_OPS.get(op)
    return None if entry is None else entry.kind
