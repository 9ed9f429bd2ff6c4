"""GPT-style training step on CPU: selective recompute policies and transformer presets.

Modes: no recompute, full recompute of every block, per-block policies
(``save_matmuls``, ``save_matmuls_no_batch``, ``save_all_but_attention_core``) and the
``recompute_granularity`` presets (``full_attn``, ``core_attn``).  Same weights, same
batches and dropout masks per mode; rounds interleaved, medians over the rounds after a
warm-up.  Losses must equal the no-recompute run bit for bit.

    python benchmarks/selective.py [--rounds 5] [--modes none,full,...] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

os.environ.setdefault("FLAGS_enable_host_memory_stat", "1")  # before Paddle is imported
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gpt_model  # noqa: E402
import paddle  # noqa: E402
from gpt_model import GPT, GPTConfig, MiB  # noqa: E402

import paddle_recompute as pr  # noqa: E402
from paddle_recompute import policies  # noqa: E402


def _policy_runner(policy):
    return lambda block, x: pr.recompute(block, x, use_reentrant=False, policy=policy)


RUNNERS = {
    "none": lambda block, x: block(x),
    "full": lambda block, x: pr.recompute(block, x, use_reentrant=False),
    "save_matmuls": _policy_runner(policies.save_matmuls),
    "save_matmuls_no_batch": _policy_runner(policies.save_matmuls_no_batch),
    "save_all_but_attention_core": _policy_runner(policies.save_all_but_attention_core),
    "recompute_all": _policy_runner(policies.recompute_all),
}
PRESETS = ("full_attn", "core_attn")
BASE = "none"


def build(cfg: GPTConfig, mode: str):
    paddle.seed(0)
    model = GPT(cfg, RUNNERS.get(mode, RUNNERS["none"]))
    if mode in PRESETS:
        for block in model.blocks:
            pr.apply_recompute_granularity(block, mode)
    model.train()
    return model, paddle.optimizer.AdamW(1e-3, parameters=model.parameters())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--modes", default=",".join([*RUNNERS, *PRESETS]))
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    cfg = GPTConfig()
    if not gpt_model.memory_stats_enabled():
        sys.exit("host memory statistics are off: set FLAGS_enable_host_memory_stat=1")
    modes = args.modes.split(",")
    models = {m: build(cfg, m) for m in modes}
    stats = {m: [] for m in modes}
    for step in range(1 + args.rounds):
        order = modes[step % len(modes):] + modes[:step % len(modes)]
        for mode in order:
            stats[mode].append(gpt_model.train_step(*models[mode], cfg, step, seed=0))
        print(f"  round {step} done", file=sys.stderr)
    base = stats[BASE]
    results = {}
    for mode in modes:
        s = stats[mode]
        assert [x.loss for x in s] == [x.loss for x in base], f"{mode}: losses differ from none"
        timed = s[1:]
        results[mode] = {
            "forward_MiB": statistics.median(x.forward_bytes for x in timed) / MiB,
            "peak_MiB": statistics.median(x.peak_bytes for x in timed) / MiB,
            "step_s": statistics.median(x.seconds for x in timed),
        }
    b = results[BASE]
    print(f"{'mode':30s} {'fwd MiB':>9s} {'x none':>7s} {'peak MiB':>9s} {'step s':>8s} {'x none':>7s}")
    for mode, r in results.items():
        print(f"{mode:30s} {r['forward_MiB']:9.1f} {r['forward_MiB'] / b['forward_MiB']:7.3f} "
              f"{r['peak_MiB']:9.1f} {r['step_s']:8.3f} {r['step_s'] / b['step_s']:7.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
