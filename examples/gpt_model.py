"""A small GPT-style language model and one measured training step, shared by
``examples/quickstart.py`` and ``benchmarks/gpt.py``.

Each transformer block goes through a *runner* ``runner(block, x) -> y``; the runners in
:data:`RUNNERS` call the block directly or through a recompute implementation.  Memory is
read from Paddle's host allocator statistics, which exist only when
``FLAGS_enable_host_memory_stat=1`` is in the environment before Paddle is imported (this
module sets it if Paddle is not imported yet).
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass

if "paddle" not in sys.modules:
    os.environ.setdefault("FLAGS_enable_host_memory_stat", "1")

import numpy as np  # noqa: E402
import paddle  # noqa: E402
import paddle.nn.functional as F  # noqa: E402
from paddle import nn  # noqa: E402
from paddle.base import core  # noqa: E402
from paddle.distributed.fleet.utils import recompute as paddle_recompute_builtin  # noqa: E402

from paddle_recompute import recompute  # noqa: E402

MiB = 1024 * 1024


@dataclass
class GPTConfig:
    """Model and batch sizes."""

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

    def forward(self, x):
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

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Layer):
    """Token + position embeddings, ``cfg.blocks`` blocks, final LayerNorm, tied LM head."""

    def __init__(self, cfg: GPTConfig, runner):
        super().__init__()
        self.runner = runner
        self.tok = nn.Embedding(cfg.vocab, cfg.hidden)
        self.pos = nn.Embedding(cfg.seq, cfg.hidden)
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.LayerList([Block(cfg) for _ in range(cfg.blocks)])
        self.ln_f = nn.LayerNorm(cfg.hidden)

    def forward(self, tokens):
        positions = paddle.arange(tokens.shape[1]).unsqueeze(0)
        x = self.drop(self.tok(tokens) + self.pos(positions))
        for block in self.blocks:
            x = self.runner(block, x)
        return paddle.matmul(self.ln_f(x), self.tok.weight, transpose_y=True)


RUNNERS = {
    "none": lambda block, x: block(x),
    "builtin reentrant": lambda block, x: paddle_recompute_builtin(block, x, use_reentrant=True),
    "builtin non-reentrant": lambda block, x: paddle_recompute_builtin(block, x, use_reentrant=False),
    "ours reentrant": lambda block, x: recompute(block, x, use_reentrant=True),
    "ours non-reentrant": lambda block, x: recompute(block, x, use_reentrant=False),
}


def build(cfg: GPTConfig, mode: str, seed: int = 0):
    """A freshly initialised model (same weights for every mode) and its AdamW optimizer."""
    paddle.seed(seed)
    model = GPT(cfg, RUNNERS[mode])
    model.train()
    return model, paddle.optimizer.AdamW(1e-3, parameters=model.parameters())


def synthetic_batch(cfg: GPTConfig, step: int):
    """Random token ids for ``step`` (the same for every mode) and next-token targets."""
    data = np.random.default_rng(step).integers(0, cfg.vocab, (cfg.batch, cfg.seq + 1))
    return paddle.to_tensor(data[:, :-1]), paddle.to_tensor(data[:, 1:])


def allocated() -> int:
    """Bytes the host allocator holds right now (needs FLAGS_enable_host_memory_stat=1)."""
    return core.host_memory_stat_current_value("Allocated", 0)


def memory_stats_enabled() -> bool:
    """True when the host allocator statistics are being recorded."""
    before = allocated()
    probe = paddle.empty([MiB // 4])  # noqa: F841  (alive while we read the counter)
    return allocated() - before >= MiB


@dataclass
class StepStats:
    """One training step, memory in bytes relative to the level before the forward.

    ``forward_bytes``: held after the forward; ``peak_bytes``: highest during the step;
    ``retained_bytes``: still held once the step's tensors are gone (0 after the first
    step, which creates the optimizer state, unless something leaks).
    """

    loss: float
    forward_bytes: int
    peak_bytes: int
    retained_bytes: int
    seconds: float


def train_step(model, optimizer, cfg: GPTConfig, step: int, seed: int = 0) -> StepStats:
    """Forward, backward and optimizer update on the batch of ``step``, measured.

    The RNG is reseeded per step so dropout draws the same masks in every mode.
    """
    tokens, targets = synthetic_batch(cfg, step)
    paddle.seed(seed + 1 + step)
    start = time.perf_counter()
    before = allocated()
    core.host_memory_stat_reset_peak_value("Allocated", 0)
    logits = model(tokens)
    loss = F.cross_entropy(logits.reshape([-1, cfg.vocab]), targets.reshape([-1]))
    forward_bytes = allocated() - before
    loss.backward()
    optimizer.step()
    optimizer.clear_grad()
    peak = core.host_memory_stat_peak_value("Allocated", 0) - before
    value = float(loss)
    seconds = time.perf_counter() - start
    del logits, loss
    return StepStats(value, forward_bytes, peak, allocated() - before, seconds)
