"""Paddle alone: tensors restored by saved-tensor hooks stay alive longer under ``paddle.grad``.

Ten ``tanh(x) * 1.5`` steps on an 8x128x16x32 float32 input (2 MiB per tensor) with hooks that
pack each saved tensor to numpy and unpack it to a new tensor. The backward peak of allocated
host memory is compared between ``out.backward(ones)`` and ``paddle.grad([out], [x], [ones])``.
Under ``paddle.grad`` every unpacked buffer is held until the backward ends (see the Memory
section of compat/README.md for the cause in Paddle's sources); no paddle-recompute code runs.

Usage:
    python compat/measure_paddle_grad_hooks.py
"""

from __future__ import annotations

import os
import subprocess
import sys

MIB = 1024 * 1024


def measure(engine: str) -> tuple[float, float]:
    """(forward peak, forward + backward peak) in MiB above the start, for one engine."""
    import gc

    import paddle
    from paddle.base import core

    x = paddle.ones([8, 128, 16, 32])
    x.stop_gradient = False
    gc.collect()
    base = core.host_memory_stat_current_value("Allocated", 0)
    core.host_memory_stat_reset_peak_value("Allocated", 0)
    with paddle.autograd.saved_tensors_hooks(lambda t: t.numpy(), paddle.to_tensor):
        out = x
        for _ in range(10):
            out = paddle.tanh(out) * 1.5
    forward = core.host_memory_stat_peak_value("Allocated", 0) - base
    ones = paddle.ones_like(out)
    if engine == "backward":
        out.backward(ones)
    else:
        paddle.grad([out], [x], grad_outputs=[ones])
    total = core.host_memory_stat_peak_value("Allocated", 0) - base
    return round(forward / MIB, 1), round(total / MIB, 1)


def main() -> int:
    if os.environ.get("FLAGS_enable_host_memory_stat") not in ("1", "true", "True"):
        env = dict(os.environ, FLAGS_enable_host_memory_stat="1")
        return subprocess.call([sys.executable, os.path.abspath(__file__)], env=env)
    print("| engine | forward peak | forward + backward peak |\n|---|---|---|")
    for engine in ("backward", "paddle.grad"):
        forward, total = measure(engine)
        print(f"| {engine} | {forward} MiB | {total} MiB |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
