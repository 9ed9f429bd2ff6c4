"""One measured training step, and a memory timeline sampled while it runs."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import paddle
from paddle import nn

from .memory import DeviceMemory, HostMemory
from .models import ModelSpec

__all__ = ["StepStats", "train_step", "traced_step"]


@dataclass
class StepStats:
    """One training step; memory in bytes relative to the level before the forward.

    ``forward_bytes``: held after the forward (activations kept for backward);
    ``peak_bytes``: highest during forward, backward and optimizer update;
    ``retained_bytes``: still held after the step (0 once the optimizer state exists,
    unless something leaks).
    """

    loss: float
    forward_bytes: int
    peak_bytes: int
    retained_bytes: int
    seconds: float


def train_step(model: nn.Layer, optimizer: Any, spec: ModelSpec, cfg: Any, step: int,
               memory: HostMemory | DeviceMemory, seed: int = 0) -> StepStats:
    """Forward, backward and optimizer update on the batch of ``step``, measured.

    The RNG is reseeded per step so dropout draws the same masks in every mode.
    """
    inputs, targets = spec.batch(cfg, step)
    paddle.seed(seed + 1 + step)
    memory.sync()
    start = time.perf_counter()
    before = memory.current()
    memory.reset_peak()
    loss = spec.loss(model(inputs), targets)
    forward_bytes = memory.current() - before
    loss.backward()
    optimizer.step()
    optimizer.clear_grad()
    value = float(loss)  # waits for the device too
    memory.sync()
    seconds = time.perf_counter() - start
    peak = memory.peak() - before
    del loss
    return StepStats(value, forward_bytes, peak, memory.current() - before, seconds)


class _Sampler(threading.Thread):
    """Reads the allocator counter every ``interval`` seconds until stopped.

    Paddle's kernels release the GIL, so the samples land inside forward and backward.
    """

    def __init__(self, memory: HostMemory | DeviceMemory, interval: float):
        super().__init__(daemon=True)
        self.memory, self.interval = memory, interval
        self.samples: list[tuple[float, int]] = []
        self.stop = threading.Event()
        self.start_time = time.perf_counter()

    def run(self) -> None:
        while not self.stop.is_set():
            self.samples.append((time.perf_counter() - self.start_time, self.memory.current()))
            time.sleep(self.interval)


def traced_step(model: nn.Layer, optimizer: Any, spec: ModelSpec, cfg: Any, step: int,
                memory: HostMemory | DeviceMemory, interval: float = 5e-4) -> list[tuple[float, int]]:
    """Run one more step while sampling memory; ``[(seconds, bytes above the start), ...]``.

    Not timed: the sampling thread competes for the CPU.
    """
    base = memory.current()
    sampler = _Sampler(memory, interval)
    sampler.start()
    try:
        train_step(model, optimizer, spec, cfg, step, memory)
    finally:
        sampler.stop.set()
        sampler.join()
    return [(t, value - base) for t, value in sampler.samples]
