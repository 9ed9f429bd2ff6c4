"""Run compat/mindformers_scripts/qwen3_train.py on MindSpore 2.10's CPU build with the four
operations the CPU build has no kernel for (``RmsNorm``, ``Outer``, ``FlashAttentionScore``, the
embedding lookup's backward) computed as compositions of MindSpore CPU ops (for
compat/record/record_mindformers_qwen3.py; real MindSpore only).

    /work/msvenv/bin/python qwen3_cpu_compositions.py qwen3_train.py [script args]

After each of these mindformers cells is built, the primitive it holds is replaced by a cell that
computes what the primitive's documentation says, with CPU ops:

- ``FusedRMSNorm.norm`` (``ops.RmsNorm(eps)``): ``rstd = rsqrt(mean(x * x, -1, keepdims) + eps)``,
  ``y = (x * rstd) * gamma``; returns ``(y, rstd)`` as ``RmsNorm`` does.
- ``RotaryEmbedding.outer`` and ``.outer_for_eod`` (``Outer``): ``x[:, None] * y[None, :]`` (one
  multiplication per element: the same numbers as ``Outer``).
- ``FlashAttention.flash_attention`` (``FlashAttentionScore``, layout ``BNSD``, ``sparse_mode``
  0, ``keep_prob`` 1, no ALiBi or prefix): each query head ``i`` attends with key/value head
  ``i // (N1 // N2)``; ``scores = matmul(q, k^T) * scale_value``; where the ``uint8`` mask is 1
  the score becomes float32's lowest value (its softmax weight is exactly 0, as the kernel
  excludes it); ``softmax(scores, -1)``; ``matmul(weights, v)``. Returns ``(softmax_max,
  softmax_sum, softmax_out, attention_out)``: the row max and the row sum of ``exp(scores - max)``
  repeated 8 times on the last axis, an empty ``softmax_out``, and the attention output; only
  the last is used by mindformers here.
- ``VocabParallelEmbedding.embedding_morph`` (a ``Morph`` over ``mint.nn.functional.embedding``,
  whose backward ``EmbeddingDenseBackward`` has no CPU kernel; one device, no sequence
  parallelism): ``Gather`` of the rows, reshaped to ``(batch, seq, hidden)`` (the same numbers
  forward; the gradient adds into the gathered rows).

Everything else (the script, mindformers, the rest of MindSpore, GRAPH_MODE, recompute) is as
it is. The script runs as ``__main__``.
"""

from __future__ import annotations

import os
import runpy
import sys

import mindspore as ms
import numpy as np
from mindformers.parallel_core.training_graph.base_models.common.embeddings import rotary_pos_embedding
from mindformers.parallel_core.training_graph.tensor_parallel import layers
from mindformers.parallel_core.training_graph.transformer import flash_attention, norm
from mindspore import nn, ops

LOWEST = float(np.finfo(np.float32).min)


class EmbeddingComposite(nn.Cell):
    def construct(self, input_, weight):
        bs, seq_len = input_.shape
        rows = ops.gather(weight, ops.reshape(input_, (bs * seq_len,)), 0)
        return ops.reshape(rows, (bs, seq_len, weight.shape[1]))


class RmsNormComposite(nn.Cell):
    def __init__(self, eps):
        super().__init__()
        self.eps = eps

    def construct(self, x, gamma):
        rstd = ops.rsqrt(ops.mean(x * x, -1, True) + self.eps)
        return x * rstd * gamma, rstd


class OuterComposite(nn.Cell):
    def construct(self, x, y):
        return ops.expand_dims(x, 1) * ops.expand_dims(y, 0)


class FlashAttentionComposite(nn.Cell):
    def __init__(self, cell, prim):
        super().__init__()
        layout, mode = cell.input_layout, cell.sparse_mode
        if layout != "BNSD" or mode != 0 or prim.keep_prob != 1.0:
            raise ValueError(f"FlashAttentionComposite: layout {layout}, sparse_mode {mode}, "
                             f"keep_prob {prim.keep_prob}: only BNSD, 0, 1.0 are composed")
        self.scale = prim.scale_value

    def construct(self, query, key, value, real_shift=None, drop_mask=None, padding_mask=None,
                  attn_mask=None, prefix=None):
        key = self.grouped(key, query.shape[1])
        value = self.grouped(value, query.shape[1])
        scores = ops.matmul(query, ops.transpose(key, (0, 1, 3, 2))) * self.scale
        if attn_mask is not None:
            scores = ops.masked_fill(scores, ops.cast(attn_mask, ms.bool_), LOWEST)
        row_max = ops.max(scores, -1, True)[0]
        row_sum = ops.sum(ops.exp(scores - row_max), -1, True)
        out = ops.matmul(ops.softmax(scores, -1), value)
        tile = (1, 1, 1, 8)
        return ops.tile(row_max, tile), ops.tile(row_sum, tile), ops.zeros((0,), query.dtype), out


    def grouped(self, x, heads):
        """(B, N2, S, D) -> (B, heads, S, D), head j repeated heads // N2 times in a row."""
        b, n2, s, d = x.shape
        x = ops.tile(ops.expand_dims(x, 2), (1, 1, heads // n2, 1, 1))
        return ops.reshape(x, (b, heads, s, d))


def after_init(cls, replace):
    original = cls.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        replace(self)

    cls.__init__ = init


def _norm(cell):
    cell.norm = RmsNormComposite(cell.eps)


def _outer(cell):
    cell.outer = OuterComposite()
    cell.outer_for_eod = OuterComposite()


def _attention(cell):
    cell.flash_attention = FlashAttentionComposite(cell, cell.flash_attention)


def _embedding(cell):
    if cell.enable_embedding_tp or cell.sequence_parallel:
        raise ValueError("EmbeddingComposite: one device without sequence parallelism only")
    cell.embedding_morph = EmbeddingComposite()


def install():
    """Make the three mindformers cells hold the compositions from now on."""
    after_init(norm.FusedRMSNorm, _norm)
    after_init(rotary_pos_embedding.RotaryEmbedding, _outer)
    after_init(flash_attention.FlashAttention, _attention)
    after_init(layers.VocabParallelEmbedding, _embedding)


if __name__ == "__main__":
    # The cells must live in an importable module: GRAPH_MODE resolves the names their construct
    # uses in sys.modules[cls.__module__], and runpy swaps __main__ for the script.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import qwen3_cpu_compositions

    qwen3_cpu_compositions.install()
    script, *args = sys.argv[1:]
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
