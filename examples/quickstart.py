"""Quickstart: train a small GPT-style model with and without activation recomputation.

Three runs from the same seeds: no recompute, ``recompute(block, x)`` (reentrant) on every
transformer block, and ``recompute(block, x, use_reentrant=False)`` on every block.  The
losses are identical (asserted bit for bit, dropout included); recompute trades a second
forward of each block in backward for much less memory held between forward and backward.

    python examples/quickstart.py [--steps 4 --blocks 4 --hidden 128 --seq 128 --batch 8]

The model lives in ``examples/gpt_model.py``; the recompute call is in its ``RUNNERS``:

    from paddle_recompute import recompute
    x = recompute(block, x)                        # instead of x = block(x)
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("FLAGS_enable_host_memory_stat", "1")  # before Paddle is imported

import gpt_model  # noqa: E402
import numpy as np  # noqa: E402
from gpt_model import GPTConfig, MiB  # noqa: E402

MODES = {"no recompute": "none", "reentrant": "ours reentrant", "non-reentrant": "ours non-reentrant"}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=4, help="training steps per mode")
    parser.add_argument("--blocks", type=int, default=4, help="transformer blocks")
    parser.add_argument("--hidden", type=int, default=128, help="hidden size")
    parser.add_argument("--heads", type=int, default=4, help="attention heads")
    parser.add_argument("--seq", type=int, default=128, help="sequence length")
    parser.add_argument("--batch", type=int, default=8, help="batch size")
    parser.add_argument("--vocab", type=int, default=512, help="vocabulary size")
    return parser.parse_args()


def train(cfg: GPTConfig, mode: str, steps: int) -> list:
    """Build the model from seed 0 and train ``steps`` steps; the StepStats of each step."""
    model, optimizer = gpt_model.build(cfg, mode, seed=0)
    return [gpt_model.train_step(model, optimizer, cfg, step, seed=0) for step in range(steps)]


def print_losses(runs: dict) -> None:
    """Per-step loss of each mode, one column per mode."""
    names = list(runs)
    print("| step | " + " | ".join(names) + " |")
    print("|---:|" + "---:|" * len(names))
    for step in range(len(runs[names[0]])):
        print(f"| {step} | " + " | ".join(f"{runs[n][step].loss:.7f}" for n in names) + " |")


def print_summary(runs: dict) -> None:
    """Forward activation memory and mean step time of each mode."""
    base = runs["no recompute"][-1].forward_bytes
    print("| mode | forward activations (MiB) | vs no recompute | mean step time (ms) |")
    print("|---|---:|---:|---:|")
    for name, stats in runs.items():
        timed = stats[1:] or stats  # the first step includes warm-up and optimizer state creation
        fwd = stats[-1].forward_bytes
        ms = 1e3 * float(np.mean([s.seconds for s in timed]))
        print(f"| {name} | {fwd / MiB:.2f} | {fwd / base:.2f}x | {ms:.1f} |")


def main() -> None:
    args = parse_args()
    cfg = GPTConfig(vocab=args.vocab, hidden=args.hidden, heads=args.heads, blocks=args.blocks,
                    seq=args.seq, batch=args.batch, dropout=0.1)
    if not gpt_model.memory_stats_enabled():
        raise SystemExit("host memory statistics are off: run with FLAGS_enable_host_memory_stat=1")
    print(f"GPT: {cfg.blocks} blocks, hidden {cfg.hidden}, {cfg.heads} heads, seq {cfg.seq}, "
          f"batch {cfg.batch}, vocab {cfg.vocab}, dropout {cfg.dropout}; {args.steps} AdamW steps\n")
    runs = {name: train(cfg, mode, args.steps) for name, mode in MODES.items()}
    print_losses(runs)
    reference = np.array([s.loss for s in runs["no recompute"]])
    for name, stats in runs.items():
        np.testing.assert_array_equal(np.array([s.loss for s in stats]), reference, err_msg=name)
    print("\nLosses are bit-for-bit identical in all three modes (np.testing.assert_array_equal).\n")
    print_summary(runs)
    print("\nforward activations: host memory held after the forward minus before it (last step);"
          "\nmean step time: forward + backward + AdamW update, steps after the first.")


if __name__ == "__main__":
    main()
