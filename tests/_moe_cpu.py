"""Paddle's incubate ``MoELayer`` on CPU: stand-ins for its five routing kernels.

``number_count``, ``assign_pos``, ``limit_by_capacity``, ``prune_gate_by_capacity`` and
``random_routing`` have CUDA kernels only (their CPU kernels raise "Do not support ... for
cpu kernel now").  They are integer bookkeeping under ``no_grad`` (how many tokens each
expert gets, where they go, which ones capacity drops), so a test can run them with numpy
and everything else, the gate, ``MoEScatter``/``MoEGather``, the experts called once per
expert that got tokens, the combining ``bmm``, is Paddle's own code.  Each follows the
reference loop in the kernel's docstring, one worker (``world_size`` 1, no process group);
where the CUDA kernel orders tokens with atomics, these take them in order.
"""

from __future__ import annotations

import contextlib

import numpy as np
import paddle
from paddle.distributed.models.moe import utils as moe_ops
from paddle.incubate.distributed.models.moe import utils as incubate_utils


def number_count(numbers, upper_range):
    """Tokens per expert (``-1``: a token dropped by capacity or random routing)."""
    flat = numbers.numpy().reshape(-1)
    return paddle.to_tensor(np.bincount(flat[flat >= 0], minlength=upper_range).astype("int64"))


def assign_pos(x, cum_count):
    """Token positions grouped by expert (``cum_count``: the running token count per expert)."""
    flat, ends = x.numpy().reshape(-1), cum_count.numpy().copy()
    out = np.zeros(int(ends[-1]) if ends.size else 0, dtype="int64")
    for i, expert in enumerate(flat):
        if expert >= 0:
            ends[expert] -= 1
            out[ends[expert]] = i
    return paddle.to_tensor(out)


def limit_by_capacity(expert_count, capacity, n_worker):
    """Each worker's count per expert, cut to what the expert's capacity leaves."""
    count, left = expert_count.numpy().reshape(n_worker, -1), capacity.numpy().copy()
    out = np.zeros_like(count)
    for w in range(n_worker):
        take = np.minimum(count[w], np.maximum(left, 0))
        out[w], left = take, left - count[w]
    return paddle.to_tensor(out.reshape(-1))


def prune_gate_by_capacity(gate_idx, expert_count, n_expert, n_worker):
    """``-1`` for the tokens past their expert's (limited) count."""
    flat, left = gate_idx.numpy().reshape(-1).copy(), expert_count.numpy().copy()
    for i, expert in enumerate(flat):
        if expert >= 0:
            left[expert] -= 1
            if left[expert] < 0:
                flat[i] = -1
    return paddle.to_tensor(flat.reshape(gate_idx.shape))


def random_routing(topk_idx, topk_value, prob, topk=2):
    """The second choice dropped where ``topk * its gate value < prob``."""
    idx = topk_idx.numpy().copy()
    idx[(topk * topk_value.numpy()[:, topk - 1]) < prob.numpy(), topk - 1] = -1
    return paddle.to_tensor(idx)


_STAND_INS = {
    (incubate_utils, "_number_count"): number_count,
    (incubate_utils, "_assign_pos"): assign_pos,
    (incubate_utils, "_limit_by_capacity"): limit_by_capacity,
    (incubate_utils, "_prune_gate_by_capacity"): prune_gate_by_capacity,
    (moe_ops, "_random_routing"): random_routing,  # looked up on this module at call time
}


@contextlib.contextmanager
def routing_on_cpu():
    """MoELayer's routing kernels replaced by the stand-ins for the body, then restored."""
    saved = {key: getattr(*key) for key in _STAND_INS}
    try:
        for (module, name), fn in _STAND_INS.items():
            setattr(module, name, fn)
        yield
    finally:
        for (module, name), fn in saved.items():
            setattr(module, name, fn)
