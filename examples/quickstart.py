"""Quickstart: one call, ``recompute(block, x)``, instead of ``block(x)``.

What it shows: a small residual MLP (with dropout) learns a fixed regression batch, twice
from the same seeds, once with its blocks run through ``recompute`` and once without.
Losses and gradients are bit-for-bit identical (dropout included) while the activations
kept between forward and backward shrink.  For time and memory of every mode, run
``paddle-recompute bench``.

    python examples/quickstart.py [--steps 3]

Output: one line per step with the loss with recompute and without (falling, equal), a
line saying the gradients are identical too, and the host memory the last forward kept
for backward in each run.
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("FLAGS_enable_host_memory_stat", "1")  # before Paddle is imported

import numpy as np  # noqa: E402
import paddle  # noqa: E402
from paddle import nn  # noqa: E402

from paddle_recompute import recompute  # noqa: E402
from paddle_recompute.bench import HostMemory, MiB  # noqa: E402


class Net(nn.Layer):
    """Four residual blocks; ``use_recompute`` routes each through ``recompute``."""

    def __init__(self, use_recompute: bool, width: int = 256):
        super().__init__()
        self.use_recompute = use_recompute
        self.blocks = nn.LayerList([
            nn.Sequential(nn.LayerNorm(width), nn.Linear(width, 4 * width), nn.GELU(),
                          nn.Linear(4 * width, width), nn.Dropout(0.1))
            for _ in range(4)
        ])
        self.head = nn.Linear(width, 1)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        for block in self.blocks:
            x = x + (recompute(block, x) if self.use_recompute else block(x))
        return self.head(x)


def train(use_recompute: bool, steps: int) -> tuple[list[float], list[np.ndarray], int]:
    """Losses, final gradients and the bytes the last forward kept for backward."""
    paddle.seed(0)
    model, memory = Net(use_recompute), HostMemory()
    optimizer = paddle.optimizer.AdamW(1e-4, parameters=model.parameters())
    x = paddle.randn([512, 256])
    target = x.mean(axis=1, keepdim=True)  # a function to learn, so the losses fall
    losses = []
    for _ in range(steps):
        before = memory.current()
        loss = (model(x) - target).square().mean()
        held = memory.current() - before
        loss.backward()
        grads = [p.grad.numpy() for p in model.parameters()]
        optimizer.step()
        optimizer.clear_grad()
        losses.append(float(loss))
        del loss  # frees this step's graph before the next forward is measured
    return losses, grads, held


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=3)
    steps = parser.parse_args(argv).steps
    plain = train(False, steps)
    recomputed = train(True, steps)
    np.testing.assert_array_equal(recomputed[0], plain[0])
    for a, b in zip(recomputed[1], plain[1], strict=True):
        np.testing.assert_array_equal(a, b)
    for step, (loss, ref) in enumerate(zip(recomputed[0], plain[0], strict=True)):
        print(f"step {step}  loss {loss:.6f} with recompute, {ref:.6f} without")
    print("identical, bit for bit, as are all gradients")
    if HostMemory().enabled():
        print(f"kept for backward: {plain[2] / MiB:.1f} MiB without recompute, "
              f"{recomputed[2] / MiB:.1f} MiB with it")


if __name__ == "__main__":
    main()
