"""The planner fits a memory budget: recompute only what is needed, at the least extra time.

What it shows: ``paddle_recompute.planner.plan`` profiles one forward of the GPT-style
model, then picks per transformer block what to recompute so the activations saved for
backward fit ``--budget`` (a fraction of what no recompute saves) at the least predicted
recompute time.  The example trains on one fixed batch (which the model learns, so the
loss falls) without recompute and with the plan applied, measures what the forward really
kept, and asserts that the losses are bit-for-bit equal.

    python examples/planner_budget.py [--budget 0.5 --steps 5 --blocks 4 --hidden 128 --seq 128]

Output: the plan (per block: ``keep``, ``full`` or the sublayers / policy it recomputes, the
bytes it holds and the time it adds; then the prediction against the budget), one line per
step with the loss under the plan and without recompute (falling, equal), and the memory
the last forward held in each run (with the plan, close to the budget or under it).
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("FLAGS_enable_host_memory_stat", "1")  # before Paddle is imported

import numpy as np  # noqa: E402
import paddle  # noqa: E402

import paddle_recompute  # noqa: E402

# the GPT that `paddle-recompute bench` measures
from paddle_recompute.bench import GPT, GPTConfig, HostMemory, MiB, gpt_batch, gpt_loss, quick_config  # noqa: E402


def train(cfg: GPTConfig, steps: int, budget: float | None) -> tuple[list[float], list[int]]:
    """Losses and bytes held after each forward; with ``budget``, under the planner's plan."""
    paddle.seed(0)
    model = GPT(cfg)
    optimizer = paddle.optimizer.AdamW(1e-3, parameters=model.parameters())
    tokens, targets = gpt_batch(cfg, 0)  # one batch, reused every step: the model can fit it
    applied = None
    if budget is not None:
        plan = paddle_recompute.planner.plan(lambda t, y: gpt_loss(model(t), y), tokens, targets,
                                             budget=budget)
        print(plan, "\n")
        applied = plan.apply(model)
    memory, losses, held = HostMemory(), [], []
    try:
        for step in range(steps):
            paddle.seed(1 + step)
            before = memory.current()
            loss = gpt_loss(model(tokens), targets)
            held.append(memory.current() - before)
            loss.backward()
            optimizer.step()
            optimizer.clear_grad()
            losses.append(float(loss))
            del loss
    finally:
        if applied is not None:
            applied.remove()
    return losses, held


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budget", type=float, default=0.5, help="fraction of no-recompute activations")
    parser.add_argument("--steps", type=int, default=5)
    defaults = quick_config("gpt")
    for name in ("blocks", "hidden", "heads", "seq", "batch", "vocab"):
        parser.add_argument(f"--{name}", type=int, default=getattr(defaults, name))
    args = parser.parse_args(argv)
    cfg = GPTConfig(vocab=args.vocab, hidden=args.hidden, heads=args.heads, blocks=args.blocks,
                    seq=args.seq, batch=args.batch)
    reference, ref_held = train(cfg, args.steps, None)
    losses, held = train(cfg, args.steps, args.budget)
    np.testing.assert_array_equal(losses, reference)
    for step, (loss, ref) in enumerate(zip(losses, reference, strict=True)):
        print(f"step {step}  loss {loss:.6f} with the plan, {ref:.6f} without recompute")
    print(f"held after the forward: {ref_held[-1] / MiB:.2f} MiB without recompute, "
          f"{held[-1] / MiB:.2f} MiB with the plan ({held[-1] / ref_held[-1]:.2f}x; "
          f"budget {args.budget:.2f}x)")
    print("losses with the plan are bit-for-bit equal to training without recompute")


if __name__ == "__main__":
    main()
