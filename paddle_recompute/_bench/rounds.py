"""Interleaved benchmark rounds: every mode does round r, in rotating order, before r + 1.

Interleaving spreads the machine's slow moments over all modes, so their ratios hold on
a noisy machine; the first ``warmup`` rounds (allocator growth, optimizer state) are
measured but left out of the medians.

Interleaving has a bias of its own on CPU: a mode that follows others finds memory they
handed back to the system, and the mode that holds the most (no recompute) pays the most
for getting it again.  With ``warm``, each mode runs an untimed step right before its
timed one, as it would in a training loop (measured on the GPT target: no recompute then
runs 3.96 s a step instead of 4.0-5.4 s, and every recompute ratio grows).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import paddle

from .measure import StepStats, traced_step, train_step
from .memory import DeviceMemory, HostMemory
from .models import ModelSpec
from .modes import Mode

__all__ = ["BenchRun", "run_rounds"]


@dataclass
class BenchRun:
    """What :func:`run_rounds` measured: per mode, its steps, its error, its memory timeline."""

    warmup: int
    stats: dict[str, list[StepStats]]
    failed: dict[str, str] = field(default_factory=dict)
    timelines: dict[str, list[tuple[float, int]]] = field(default_factory=dict)


def _build(spec: ModelSpec, cfg: Any, mode: Mode, seed: int) -> tuple[Any, Any]:
    """The model (same initial weights for every mode) with its runner, and its optimizer."""
    paddle.seed(seed)
    model = spec.model(cfg)
    model.train()
    model.runner = mode.prepare(model, spec.batch(cfg, 0)[0])
    return model, paddle.optimizer.AdamW(1e-3, parameters=model.parameters())


def _error(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:120] if text else ''}"


def run_rounds(spec: ModelSpec, cfg: Any, modes: list[Mode], memory: HostMemory | DeviceMemory, *,
               rounds: int, warmup: int = 1, timeline: bool = False, seed: int = 0, warm: bool = False,
               tick: Callable[[str], None] = lambda label: None) -> BenchRun:
    """Train one model per mode for ``warmup + rounds`` interleaved steps.

    A mode that raises is recorded in ``failed`` and skipped afterwards (Paddle's built-in
    recompute fails on some models; the table shows why).  ``tick(label)`` is called after
    every step, for a progress bar.  With ``timeline``, each mode then runs one extra,
    untimed step while its memory is sampled.  With ``warm``, every timed step follows an
    untimed step of the same mode (steps 2r and 2r + 1 of round r).
    """
    run = BenchRun(warmup, {mode.name: [] for mode in modes})
    models: dict[str, tuple[Any, Any]] = {}
    for mode in modes:
        try:
            models[mode.name] = _build(spec, cfg, mode, seed)
        except Exception as exc:  # a mode's setup failing is a result, not a crash
            run.failed[mode.name] = _error(exc)
    stride = 2 if warm else 1
    for r in range(warmup + rounds):
        shift = r % len(modes)
        for mode in modes[shift:] + modes[:shift]:
            if mode.name not in run.failed:
                try:
                    if warm:
                        train_step(*models[mode.name], spec, cfg, stride * r, memory, seed)
                    step = stride * r + stride - 1
                    run.stats[mode.name].append(train_step(*models[mode.name], spec, cfg, step, memory, seed))
                except Exception as exc:  # reported in the table; other modes go on
                    run.failed[mode.name] = _error(exc)
            tick(f"round {r + 1}/{warmup + rounds} {mode.name}")
    if timeline:
        for mode in modes:
            if mode.name not in run.failed:
                run.timelines[mode.name] = traced_step(*models[mode.name], spec, cfg,
                                                       stride * (warmup + rounds), memory)
            tick(f"timeline {mode.name}")
    return run
