"""Fused kernels mindformers' training-graph models call, computed with Paddle's unfused ops:
``RmsNorm``, ``FlashAttentionScore`` (no dropout, ``sparse_mode`` 0), ``DropoutExt`` (only
``p == 0``) and ``Morph`` (its function, as MindSpore expands it before autodiff).

Each gives the numbers MindSpore's kernel documents up to float rounding (the fused kernels
sum in their own order); gradients are Paddle's autograd through the same arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import paddle
import paddle.nn.functional as F

from .._primitive import Primitive
from .._validate import not_provided
from ..context import GRAPH_MODE, get_context

__all__ = ["RmsNorm", "FlashAttentionScore", "DropoutExt", "Morph"]

_LOWEST = float(np.finfo(np.float32).min)
_LAYOUTS = ("BSH", "BNSD", "SBH", "BSND")


class RmsNorm(Primitive):
    """``RmsNorm(epsilon=1e-6)(x, gamma)``: ``(y, rstd)`` with ``rstd = 1 / sqrt(mean(x ** 2) +
    epsilon)`` over ``gamma``'s (trailing) dimensions and ``y = x * rstd * gamma``; ``rstd`` keeps
    those dimensions as 1 and is float32."""

    def setup(self, epsilon: float = 1e-6) -> None:
        self.epsilon = float(epsilon)
        self.add_prim_attr("epsilon", self.epsilon)

    def compute(self, x: paddle.Tensor, gamma: paddle.Tensor) -> tuple[paddle.Tensor, paddle.Tensor]:
        axes = list(range(x.ndim - gamma.ndim, x.ndim))
        xf = x.astype("float32")
        rstd = paddle.rsqrt(paddle.mean(xf * xf, axis=axes, keepdim=True) + self.epsilon)
        return (xf * rstd * gamma.astype("float32")).astype(x.dtype), rstd


class FlashAttentionScore(Primitive):
    """``FlashAttentionScore(head_num, keep_prob=1.0, scale_value=1.0, pre_tokens=2147483647,
    next_tokens=2147483647, inner_precise=0, input_layout='BSH', sparse_mode=0)(query, key, value,
    real_shift=None, drop_mask=None, padding_mask=None, attn_mask=None, prefix=None, ...)``.

    Returns ``(softmax_max, softmax_sum, softmax_out, attention_out)``: ``attention_out =
    softmax(query @ key^T * scale_value) @ value`` per head, where query head ``i`` uses key/value
    head ``i // (N1 // N2)``; a 1 in ``attn_mask`` (and, with a mask, a key outside
    ``[i - pre_tokens, i + next_tokens]``) excludes that score. ``softmax_max`` and
    ``softmax_sum`` are each row's max and ``sum(exp(score - max))``, repeated 8 times on a last
    axis (``(B, N1, S1, 8)``); ``softmax_out`` is empty, as MindSpore documents it.

    Raises:
        NotImplementedError: ``keep_prob < 1``, a ``sparse_mode`` other than 0, layout ``TND``
            or ``TH``, or ``real_shift``, ``drop_mask``, ``padding_mask``, ``prefix`` or actual
            sequence lengths passed.
    """

    def setup(self, head_num: int, keep_prob: float = 1.0, scale_value: float = 1.0,
              pre_tokens: int = 2147483647, next_tokens: int = 2147483647, inner_precise: int = 0,
              input_layout: str = "BSH", sparse_mode: int = 0) -> None:
        if input_layout not in _LAYOUTS + ("TND", "TH"):
            raise ValueError(f"For 'FlashAttentionScore', 'input_layout' must be one of "
                             f"{list(_LAYOUTS) + ['TND', 'TH']}, but got {input_layout}.")
        self.head_num, self.keep_prob, self.scale_value = int(head_num), float(keep_prob), float(scale_value)
        self.pre_tokens, self.next_tokens, self.inner_precise = pre_tokens, next_tokens, inner_precise
        self.input_layout, self.sparse_mode = input_layout, sparse_mode
        for name in ("head_num", "keep_prob", "scale_value", "pre_tokens", "next_tokens",
                     "inner_precise", "input_layout", "sparse_mode"):
            self.add_prim_attr(name, getattr(self, name))

    def compute(self, query, key, value, real_shift=None, drop_mask=None, padding_mask=None,
                attn_mask=None, prefix=None, actual_seq_qlen=None, actual_seq_kvlen=None):
        self._check(real_shift, drop_mask, padding_mask, prefix, actual_seq_qlen, actual_seq_kvlen)
        d = query.shape[-1] if self.input_layout in ("BNSD", "BSND") else query.shape[-1] // self.head_num
        q, k, v = (self._to_bnsd(t, d) for t in (query, key, value))
        heads = q.shape[1]
        if heads % k.shape[1]:
            raise ValueError(f"For 'FlashAttentionScore', the query's head number {heads} must be a "
                             f"multiple of the key's {k.shape[1]}.")
        k, v = _grouped(k, heads), _grouped(v, heads)
        scores = paddle.matmul(q, k, transpose_y=True) * self.scale_value
        if attn_mask is not None:
            excluded = attn_mask.astype("bool") | self._band(q.shape[2], k.shape[2])
            scores = paddle.where(excluded, paddle.full([], _LOWEST, scores.dtype), scores)
        row_max = scores.max(axis=-1, keepdim=True)
        row_sum = paddle.exp(scores - row_max).sum(axis=-1, keepdim=True)
        out = paddle.matmul(F.softmax(scores, axis=-1), v)
        stats = [paddle.tile(t, [1, 1, 1, 8]).astype("float32") for t in (row_max, row_sum)]
        return stats[0], stats[1], paddle.zeros([0], out.dtype), self._from_bnsd(out, query)

    def _check(self, *unsupported: Any) -> None:
        if self.keep_prob < 1.0 or self.sparse_mode != 0 or self.input_layout in ("TND", "TH"):
            raise not_provided(
                f"FlashAttentionScore(keep_prob={self.keep_prob}, sparse_mode={self.sparse_mode}, "
                f"input_layout={self.input_layout!r})", "only keep_prob=1, sparse_mode=0 and the "
                "BSH/BNSD/SBH/BSND layouts are computed")
        names = ("real_shift", "drop_mask", "padding_mask", "prefix", "actual_seq_qlen", "actual_seq_kvlen")
        given = [n for n, a in zip(names, unsupported, strict=True) if a is not None]
        if given:
            raise not_provided(f"FlashAttentionScore called with {', '.join(given)}",
                               "only query, key, value and attn_mask are computed")

    def _band(self, s1: int, s2: int) -> paddle.Tensor:
        i = paddle.arange(s1).unsqueeze(1)
        j = paddle.arange(s2).unsqueeze(0)
        return (j < i - self.pre_tokens) | (j > i + self.next_tokens)

    def _to_bnsd(self, t: paddle.Tensor, d: int) -> paddle.Tensor:
        if self.input_layout == "BNSD":
            return t
        if self.input_layout == "BSND":
            return t.transpose([0, 2, 1, 3])
        if self.input_layout == "SBH":
            t = t.transpose([1, 0, 2])
        b, s, h = t.shape  # BSH
        return t.reshape([b, s, h // d, d]).transpose([0, 2, 1, 3])

    def _from_bnsd(self, out: paddle.Tensor, query: paddle.Tensor) -> paddle.Tensor:
        if self.input_layout == "BNSD":
            return out
        if self.input_layout == "BSND":
            return out.transpose([0, 2, 1, 3])
        b, n, s, d = out.shape
        out = out.transpose([0, 2, 1, 3]).reshape([b, s, n * d])
        return out.transpose([1, 0, 2]) if self.input_layout == "SBH" else out


def _grouped(x: paddle.Tensor, heads: int) -> paddle.Tensor:
    """(B, N2, S, D) -> (B, heads, S, D), each key/value head repeated heads // N2 times in a row."""
    b, n2, s, d = x.shape
    if n2 == heads:
        return x
    return paddle.tile(x.unsqueeze(2), [1, 1, heads // n2, 1, 1]).reshape([b, heads, s, d])


class DropoutExt(Primitive):
    """``DropoutExt()(input, p, seed, offset)``: ``(output, mask)``. Only ``p == 0`` is computed
    (the output is ``input``, every element kept): MindSpore draws the mask from its Philox
    stream at ``(seed, offset)``, which this layer does not reproduce."""

    def compute(self, input: paddle.Tensor, p: float, seed: Any, offset: Any):
        if float(p) != 0.0:
            raise not_provided(f"DropoutExt with p={p}",
                               "MindSpore's (seed, offset) random stream is not reproduced; use "
                               "nn.Dropout, or p=0")
        keep = paddle.full([(int(np.prod(input.shape)) + 7) // 8], 255, "uint8")
        return input, keep


class Morph(Primitive):
    """``Morph(fn, infer_shape, infer_dtype, bprop_fn=None)(*args)``: ``fn(*args)``. MindSpore
    replaces the primitive by ``fn`` before differentiating, so the gradient is ``fn``'s; it does
    so in GRAPH_MODE only and raises ``RuntimeError`` in PyNative mode, as here.

    Raises:
        RuntimeError: called while the context's mode is PYNATIVE_MODE.
        NotImplementedError: a ``bprop_fn`` was given.
    """

    def setup(self, fn: Callable, infer_shape: Callable, infer_dtype: Callable,
              bprop_fn: Callable | None = None) -> None:
        self.fn, self.infer_shape, self.infer_dtype, self.bprop_fn = fn, infer_shape, infer_dtype, bprop_fn
        self.add_prim_attr("__metamorphosis__", True)

    def compute(self, *args: Any) -> Any:
        if get_context("mode") != GRAPH_MODE:
            raise RuntimeError("Morph is only supported in GRAPH_MODE.")  # MindSpore 2.10's text
        if self.bprop_fn is not None:
            raise not_provided("Morph(..., bprop_fn=...)", "give Morph no bprop_fn: its gradient is fn's")
        return self.fn(*args)
