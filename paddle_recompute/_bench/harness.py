"""The GPT benchmark model with a one-call build and measured training step.

For the scripts in ``benchmarks/`` and the tests: ``build(cfg, mode)`` gives a seeded model
and its optimizer, with the blocks run through one of the five layer-level modes, and
``train_step`` measures one step on the host allocator.
"""

from __future__ import annotations

import os
import sys

if "paddle" not in sys.modules:
    os.environ.setdefault("FLAGS_enable_host_memory_stat", "1")

import paddle  # noqa: E402

from paddle_recompute._bench.gpt import GPT, Block, CausalSelfAttention, GPTConfig  # noqa: E402,F401
from paddle_recompute._bench.gpt import gpt_batch as synthetic_batch  # noqa: E402,F401
from paddle_recompute._bench.measure import StepStats  # noqa: E402,F401
from paddle_recompute._bench.measure import train_step as _measured_step  # noqa: E402
from paddle_recompute._bench.memory import HostMemory, MiB  # noqa: E402,F401
from paddle_recompute._bench.models import MODELS  # noqa: E402
from paddle_recompute._bench.modes import MODES  # noqa: E402

#: ``runner(block, x)`` of the five layer-level modes (they ignore the model)
RUNNERS = {name: MODES[name].prepare(None, None) for name in (
    "none", "builtin reentrant", "builtin non-reentrant", "ours reentrant", "ours non-reentrant")}


def build(cfg: GPTConfig, mode: str, seed: int = 0) -> tuple[GPT, paddle.optimizer.Optimizer]:
    """A freshly initialised model (same weights for every mode) and its AdamW optimizer."""
    paddle.seed(seed)
    model = GPT(cfg, RUNNERS[mode])
    model.train()
    return model, paddle.optimizer.AdamW(1e-3, parameters=model.parameters())


def train_step(model: GPT, optimizer: paddle.optimizer.Optimizer, cfg: GPTConfig, step: int,
               seed: int = 0) -> StepStats:
    """Forward, backward and update on the batch of ``step``, measured on the host allocator."""
    return _measured_step(model, optimizer, MODELS["gpt"], cfg, step, HostMemory(), seed)


def allocated() -> int:
    """Bytes the host allocator holds right now."""
    return HostMemory().current()


def memory_stats_enabled() -> bool:
    """True when the host allocator statistics are being recorded."""
    return HostMemory().enabled()
