"""Plan PaddleFormers' Llama for half its activation memory, train it, and check parity.

What it shows: a ``LlamaForCausalLM`` from PaddleFormers (``pip install paddleformers``;
random init, CPU, unfused RMSNorm, grouped-query attention, RoPE, dropout), code this
library did not write, is profiled: its decoder layers (``model.model.layers``) are found as
the blocks.  ``plan`` then picks, per decoder layer, what to recompute so the activations
the forward holds fit ``--budget`` (a fraction of what no recompute holds) at the least
predicted time.  The example trains on one fixed batch of token ids (which the model
learns, so the loss falls) with the plan and without it from the same seed, and asserts
that the losses are bit-for-bit equal.

    python examples/paddleformers_llama.py [--budget 0.5 --steps 5 --layers 4 --hidden 128 --seq 128]

Output: the profile (per decoder layer and sublayer: bytes saved for backward, forward and
rerun time), the plan, one line per step with the loss under the plan and without
recompute (falling, equal), and the memory the last forward held in each run.
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("FLAGS_enable_host_memory_stat", "1")  # before Paddle is imported

import numpy as np  # noqa: E402
import paddle  # noqa: E402

from paddle_recompute import planner  # noqa: E402
from paddle_recompute.bench import HostMemory, MiB, causal_lm, nbytes_of  # noqa: E402


def build(args):
    return causal_lm("llama", vocab=args.vocab, hidden=args.hidden, heads=args.heads,
                     kv_heads=args.heads // 2, layers=args.layers, positions=args.seq, dropout=0.1)


def batch(args) -> dict:
    """One fixed batch of random token ids, reused every step (the model can fit it)."""
    ids = paddle.to_tensor(np.random.default_rng(0).integers(0, args.vocab, (args.batch, args.seq)))
    return {"input_ids": ids, "labels": ids}


def train(args, plan=None) -> tuple[list[float], list[int]]:
    """Losses and bytes held after each forward (less the outputs); under ``plan`` if given."""
    model = build(args)
    optimizer = paddle.optimizer.AdamW(1e-3, parameters=model.parameters())
    applied = planner.apply_plan(model, plan) if plan is not None else None
    memory, losses, held = HostMemory(), [], []
    try:
        for step in range(args.steps):
            paddle.seed(1 + step)
            before = memory.current()
            out = model(**batch(args))
            held.append(memory.current() - before - nbytes_of(out))  # outputs are not activations
            loss = out[0]
            del out
            loss.backward()
            optimizer.step()
            optimizer.clear_grad()
            losses.append(float(loss))
    finally:
        if applied is not None:
            applied.remove()
    return losses, held


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budget", type=float, default=0.5, help="fraction of no-recompute activations")
    parser.add_argument("--steps", type=int, default=5)
    for name, default in (("layers", 4), ("hidden", 128), ("heads", 4), ("seq", 128), ("batch", 4),
                          ("vocab", 512)):
        parser.add_argument(f"--{name}", type=int, default=default)
    args = parser.parse_args(argv)
    paddle.set_device("cpu")

    model = build(args)
    profile = planner.profile(model, **batch(args))
    print(profile, "\n")
    plan = planner.plan(model, **batch(args), budget=args.budget, profile=profile)
    print(plan, "\n")

    reference, ref_held = train(args)
    losses, held = train(args, plan)
    np.testing.assert_array_equal(losses, reference)
    for step, (loss, ref) in enumerate(zip(losses, reference, strict=True)):
        print(f"step {step}  loss {loss:.6f} with the plan, {ref:.6f} without recompute")
    print(f"held after the forward: {ref_held[-1] / MiB:.2f} MiB without recompute, "
          f"{held[-1] / MiB:.2f} MiB with the plan ({held[-1] / ref_held[-1]:.2f}x; "
          f"budget {args.budget:.2f}x)")
    print("losses with the plan are bit-for-bit equal to training without recompute")


if __name__ == "__main__":
    main()
