"""GPT-style pretraining loop with recompute switchable per block.

What it shows: which transformer blocks go through ``recompute`` is a flag; the rest run
normally.  The model (a small GPT with dropout) learns one fixed batch of token ids, so
its loss falls within a few steps.  ``--check`` trains again without recompute and
asserts that the losses are bit-for-bit identical.

    python examples/gpt_pretrain.py --recompute all --check   # every block
    python examples/gpt_pretrain.py --recompute 0,2 --non-reentrant
    python examples/gpt_pretrain.py --recompute none --steps 50 --blocks 8 --hidden 256

Output: one line per step with the loss (falling: the model memorises the batch), the
throughput, and the host memory the forward left for backward (Paddle's allocator
statistics); recomputing more blocks leaves less.  With ``--check``, a last line says the
losses equal training without recompute bit for bit (the run stops with an
``AssertionError`` otherwise).
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("FLAGS_enable_host_memory_stat", "1")  # before Paddle is imported

import numpy as np  # noqa: E402
import paddle  # noqa: E402

from paddle_recompute import recompute  # noqa: E402

# the GPT that `paddle-recompute bench` measures: blocks run as `x = model.runner(block, x)`
from paddle_recompute.bench import GPT, GPTConfig, HostMemory, MiB, gpt_batch, gpt_loss, quick_config  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--recompute", default="all",
                        help="blocks to recompute: 'all', 'none' or indices like 0,2,3 (default all)")
    parser.add_argument("--non-reentrant", action="store_true", help="use_reentrant=False")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--check", action="store_true", help="assert losses equal a run without recompute")
    defaults = quick_config("gpt")
    for name in ("blocks", "hidden", "heads", "seq", "batch", "vocab"):
        parser.add_argument(f"--{name}", type=int, default=getattr(defaults, name))
    return parser.parse_args(argv)


def chosen_blocks(text: str, n_blocks: int) -> set[int]:
    """The block indices named by ``--recompute``."""
    if text == "all":
        return set(range(n_blocks))
    if text == "none":
        return set()
    chosen = {int(i) for i in text.split(",")}
    if not chosen <= set(range(n_blocks)):
        raise SystemExit(f"--recompute: indices must be in 0..{n_blocks - 1}, got {sorted(chosen)}")
    return chosen


def make_runner(model: GPT, chosen: set[int], use_reentrant: bool):
    """Recompute the chosen blocks (by index in ``model.blocks``); run the others directly."""
    recomputed = {id(model.blocks[i]) for i in chosen}

    def runner(block, x):
        if id(block) in recomputed:
            return recompute(block, x, use_reentrant=use_reentrant)
        return block(x)
    return runner


def pretrain(cfg: GPTConfig, chosen: set[int], use_reentrant: bool, steps: int, lr: float,
             log: bool = True) -> list[float]:
    """Train from seed 0 on one fixed batch of synthetic tokens; the loss of every step."""
    paddle.seed(0)
    model = GPT(cfg)
    model.runner = make_runner(model, chosen, use_reentrant)
    optimizer = paddle.optimizer.AdamW(lr, parameters=model.parameters(),
                                       grad_clip=paddle.nn.ClipGradByGlobalNorm(1.0))
    memory = HostMemory()
    tokens, targets = gpt_batch(cfg, 0)  # the same batch every step: a model can fit it
    losses = []
    for step in range(steps):
        start, before = time.perf_counter(), memory.current()
        loss = gpt_loss(model(tokens), targets)
        held = memory.current() - before
        loss.backward()
        optimizer.step()
        optimizer.clear_grad()
        losses.append(float(loss))
        if log:
            rate = cfg.batch * cfg.seq / (time.perf_counter() - start)
            print(f"step {step:3d}  loss {losses[-1]:.4f}  {rate:8.0f} tokens/s  "
                  f"held for backward {held / MiB:7.2f} MiB")
    return losses


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    cfg = GPTConfig(vocab=args.vocab, hidden=args.hidden, heads=args.heads, blocks=args.blocks,
                    seq=args.seq, batch=args.batch)
    chosen = chosen_blocks(args.recompute, cfg.blocks)
    mode = "non-reentrant" if args.non_reentrant else "reentrant"
    print(f"GPT {cfg}; recomputing blocks {sorted(chosen) or 'none'} ({mode})")
    losses = pretrain(cfg, chosen, not args.non_reentrant, args.steps, args.lr)
    if args.check:
        reference = pretrain(cfg, set(), True, args.steps, args.lr, log=False)
        np.testing.assert_array_equal(losses, reference)
        print("check: losses are bit-for-bit equal to training without recompute")


if __name__ == "__main__":
    main()
