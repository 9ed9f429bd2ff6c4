"""A small GPT-style language model whose transformer blocks run through a *runner*.

The runner (``runner(block, x) -> y``) is where recompute goes: call the block
directly, or through ``recompute`` for the blocks chosen.  Used by ``paddle-recompute bench``,
``examples/gpt_pretrain.py`` and ``benchmarks/gpt.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

from .blocks import Runner, plain_runner

__all__ = ["GPTConfig", "GPT", "gpt_batch", "gpt_loss"]


@dataclass
class GPTConfig:
    """Model and batch sizes (defaults: the benchmark targets; ``quick_config("gpt")`` is smaller)."""

    vocab: int = 1024
    hidden: int = 256
    heads: int = 4
    blocks: int = 8
    seq: int = 256
    batch: int = 8
    dropout: float = 0.1


class CausalSelfAttention(nn.Layer):
    """Multi-head self-attention with a causal mask (hand-written, standard layers)."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.heads = cfg.heads
        self.qkv = nn.Linear(cfg.hidden, 3 * cfg.hidden)
        self.proj = nn.Linear(cfg.hidden, cfg.hidden)
        self.attn_drop = nn.Dropout(cfg.dropout)
        self.out_drop = nn.Dropout(cfg.dropout)
        mask = np.triu(np.full((cfg.seq, cfg.seq), -1e9, dtype="float32"), k=1)
        self.register_buffer("mask", paddle.to_tensor(mask), persistable=False)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        b, s, h = x.shape
        qkv = self.qkv(x).reshape([b, s, 3, self.heads, h // self.heads])
        q, k, v = qkv.transpose([2, 0, 3, 1, 4]).unbind(0)  # each [b, heads, s, d]
        scores = paddle.matmul(q, k, transpose_y=True) * (h // self.heads) ** -0.5
        probs = self.attn_drop(F.softmax(scores + self.mask[:s, :s], axis=-1))
        out = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([b, s, h])
        return self.out_drop(self.proj(out))


class Block(nn.Layer):
    """Pre-LN transformer block: x + attn(ln1(x)), then x + mlp(ln2(x))."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.hidden)
        self.attn = CausalSelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.hidden)
        self.mlp = nn.Sequential(
            nn.Linear(cfg.hidden, 4 * cfg.hidden), nn.GELU(),
            nn.Linear(4 * cfg.hidden, cfg.hidden), nn.Dropout(cfg.dropout),
        )

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Layer):
    """Token + position embeddings, ``cfg.blocks`` blocks, final LayerNorm, tied LM head."""

    def __init__(self, cfg: GPTConfig, runner: Runner = plain_runner):
        super().__init__()
        self.runner = runner
        self.tok = nn.Embedding(cfg.vocab, cfg.hidden)
        self.pos = nn.Embedding(cfg.seq, cfg.hidden)
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.LayerList([Block(cfg) for _ in range(cfg.blocks)])
        self.ln_f = nn.LayerNorm(cfg.hidden)

    def forward(self, tokens: paddle.Tensor) -> paddle.Tensor:
        positions = paddle.arange(tokens.shape[1]).unsqueeze(0)
        x = self.drop(self.tok(tokens) + self.pos(positions))
        for block in self.blocks:
            x = self.runner(block, x)
        return paddle.matmul(self.ln_f(x), self.tok.weight, transpose_y=True)


def gpt_batch(cfg: GPTConfig, step: int) -> tuple[paddle.Tensor, paddle.Tensor]:
    """Random token ids for ``step`` (the same in every run) and next-token targets."""
    data = np.random.default_rng(step).integers(0, cfg.vocab, (cfg.batch, cfg.seq + 1))
    return paddle.to_tensor(data[:, :-1]), paddle.to_tensor(data[:, 1:])


def gpt_loss(logits: paddle.Tensor, targets: paddle.Tensor) -> paddle.Tensor:
    """Next-token cross entropy."""
    return F.cross_entropy(logits.reshape([-1, logits.shape[-1]]), targets.reshape([-1]))
