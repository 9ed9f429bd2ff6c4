"""Selective recompute policies: plain predicates over one operator output.

A policy is any callable ``policy(info: PolicyInfo) -> bool | Offload`` passed as
``recompute(fn, *args, use_reentrant=False, policy=...)``.  It is asked once for every
output of every operator called inside the region (see NOTE [ Selective recompute ] in
``_selective/frame.py``), and answers:

* ``True`` (:data:`SAVE`): keep this output until backward.  Saved tensors that are this
  output (or a view of it) are not recomputed, and the recomputation skips the operator
  when all its outputs were kept (and it draws no random numbers).
* ``False`` (:data:`RECOMPUTE`): free it; recompute it in backward if needed.
* :data:`OFFLOAD`: keep it, but on the host until backward (pinned memory on GPU).

Any other answer (a string, ``None``, a number, a tensor, a numpy bool) raises
``TypeError`` naming the policy and what it returned; return ``bool(...)`` of a condition.

Dropout is also asked about its mask (``op="dropout"``, ``output_index=1``, uint8: Paddle's
intermediate output, saved for backward) when its output is not kept.  Keeping the mask
alone lets the recomputation rebuild the output from it instead of drawing the random
numbers again (see NOTE [ Dropout mask replay ] in ``_selective/dropout_replay.py``).

Operators are seen where Python enters them: ``paddle._C_ops`` (every ``paddle.*``,
``F.*`` and named Tensor method), and the Tensor operators, which are C methods and are
observed on ``paddle.Tensor`` itself: ``x @ y`` is ``"matmul"``, ``x + y`` ``"add"``,
``x * y`` ``"multiply"``, ``x * 0.5`` or ``x + 1`` ``"scale"``, ``x[i]`` ``"getitem"``
(NOTE [ Tensor operators ] in ``_core/tensor_methods.py``).  Region inputs and parameters
saved for backward are always kept (they are alive anyway); parameters and other leaves
that need a gradient come back to backward as themselves.

Paddle's fused kernels (``flash_attn``, ``swiglu``, ``fused_rms_norm_ext``,
``fused_gemm_epilogue`` ...) are in :data:`FUSED_OPS` with their kind (``"matmul"``,
``"attention_core"``, ``"softmax"``, ``"norm"``, ``"activation"``, ``"elementwise"``), and
the built-in policies answer for them as for the operators they fuse (NOTE [ Fused
operators ] in ``_selective/fused_ops.py``).

Example:
    >>> import paddle, paddle_recompute as pr
    >>> from paddle_recompute import policies
    >>> block = paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.GELU(), paddle.nn.Linear(8, 4))
    >>> x = paddle.randn([2, 4]); x.stop_gradient = False
    >>> pr.recompute(block, x, use_reentrant=False, policy=policies.save_matmuls).sum().backward()
"""

from ._selective.fused_ops import FUSED_OPS, FusedOp
from ._selective.op_policy import OpPolicy
from ._selective.policies import (
    ELEMENTWISE_OPS,
    MATMUL_OPS,
    OFFLOAD,
    RECOMPUTE,
    SAVE,
    Offload,
    Policy,
    PolicyInfo,
    offload,
    recompute_all,
    save_all,
    save_all_but_attention_core,
    save_any_of,
    save_dropout_masks,
    save_matmuls,
    save_matmuls_except_scores,
    save_matmuls_except_scores_and_masks,
    save_matmuls_no_batch,
    save_names,
)

__all__ = [
    "ELEMENTWISE_OPS",
    "FUSED_OPS",
    "FusedOp",
    "MATMUL_OPS",
    "OFFLOAD",
    "RECOMPUTE",
    "SAVE",
    "Offload",
    "OpPolicy",
    "Policy",
    "PolicyInfo",
    "offload",
    "recompute_all",
    "save_all",
    "save_all_but_attention_core",
    "save_any_of",
    "save_dropout_masks",
    "save_matmuls",
    "save_matmuls_except_scores",
    "save_matmuls_except_scores_and_masks",
    "save_matmuls_no_batch",
    "save_names",
]
