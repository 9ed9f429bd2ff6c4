"""GPT-style training step on CPU: selective recompute policies and transformer presets.

Modes: no recompute, full recompute of every block, per-block policies
(``save_matmuls``, ``save_matmuls_no_batch``, ``save_all_but_attention_core``) and the
``recompute_granularity`` presets (``full_attn``, ``core_attn``).  Same weights, same
batches and dropout masks per mode; rounds interleaved, medians over the rounds after a
warm-up.  Losses must equal the no-recompute run bit for bit.  Time is reported as wall
time and as this process's CPU time (``time.process_time``; with ``OMP_NUM_THREADS=1``,
set by default here, the CPU-time ratios are far steadier on a shared machine).

    python benchmarks/selective.py [--rounds 5] [--modes none,full,...] [--json out.json]
    python benchmarks/selective.py --breakdown   # which kernels each policy reruns, one block

Before the fix of NOTE [ No cycles ] (``_core/hooks.py``), every policy region leaked what it
kept, each step: with 7-8 modes in one process "none" then ran at 4.4-5.4 s a step against
4.0-4.2 s with 4 modes (the leaked memory had to be faulted in again by everyone), and the
policy modes paid most.  ``results/selective_except_scores_cpu.json`` is from after it
(``--warm --rounds 4 --modes none,full,save_matmuls_except_scores+masks,save_matmuls``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("FLAGS_enable_host_memory_stat", "1")  # before Paddle is imported
os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import paddle  # noqa: E402

import paddle_recompute as pr  # noqa: E402
from paddle_recompute import policies  # noqa: E402
from paddle_recompute.bench import GPT, GPTConfig, MiB, kernel_times  # noqa: E402
from paddle_recompute.bench import harness as gpt_model  # noqa: E402


def _policy_runner(policy):
    return lambda block, x: pr.recompute(block, x, use_reentrant=False, policy=policy)


RUNNERS = {
    "none": lambda block, x: block(x),
    "full": lambda block, x: pr.recompute(block, x, use_reentrant=False),
    "save_matmuls": _policy_runner(policies.save_matmuls),
    "save_matmuls_no_batch": _policy_runner(policies.save_matmuls_no_batch),
    "save_all_but_attention_core": _policy_runner(policies.save_all_but_attention_core),
    "recompute_all": _policy_runner(policies.recompute_all),
    # dropout masks kept (1 byte an element): the rerun rebuilds dropout outputs from them
    "save_dropout_masks": _policy_runner(policies.save_dropout_masks),
    "save_matmuls_no_batch+masks": _policy_runner(
        policies.save_any_of(policies.save_matmuls_no_batch, policies.save_dropout_masks)),
    "save_matmuls+masks": _policy_runner(
        policies.save_any_of(policies.save_matmuls, policies.save_dropout_masks)),
    "save_matmuls_except_scores+masks": _policy_runner(policies.save_matmuls_except_scores_and_masks),
    "save_all_but_attention_core+masks": _policy_runner(
        policies.save_any_of(policies.save_all_but_attention_core, policies.save_dropout_masks)),
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


def breakdown(cfg: GPTConfig) -> None:
    """Kernels executed during backward (the rerun) of one block, per policy, with times
    (dropout outputs rebuilt from kept masks as ``dropout(rebuilt)``)."""
    with kernel_times() as spent:
        for mode in ("recompute_all", "save_matmuls", "save_matmuls_no_batch",
                     "save_matmuls_no_batch+masks", "save_all_but_attention_core",
                     "save_all_but_attention_core+masks"):
            paddle.seed(0)
            block = gpt_model.Block(cfg)
            x = paddle.randn([cfg.batch, cfg.seq, cfg.hidden])
            x.stop_gradient = False
            for _ in range(2):  # the second, warm, is reported
                out = RUNNERS[mode](block, x)
                start = time.perf_counter()
                loss = out.sum()
                spent.clear()  # the backward's kernels: the reruns'
                loss.backward()
                total = time.perf_counter() - start
            rerun = sum(v[1] for v in spent.values())
            ops = ", ".join(f"{n} x{c} {t * 1e3:.1f}" for n, (c, t) in
                            sorted(spent.items(), key=lambda kv: -kv[1][1]) if t > 2e-4)
            print(f"{mode:28s} backward {total * 1e3:6.1f} ms, observed kernels rerun "
                  f"{rerun * 1e3:5.1f} ms: {ops}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--modes", default=",".join([*RUNNERS, *PRESETS]))
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("--breakdown", action="store_true", help="per-kernel rerun times, one block")
    parser.add_argument("--warm", action="store_true",
                        help="each mode runs an untimed step right before its timed one, so no "
                             "mode pays for memory the modes before it handed back")
    args = parser.parse_args()
    cfg = GPTConfig()
    if args.breakdown:
        return breakdown(cfg)
    if not gpt_model.memory_stats_enabled():
        sys.exit("host memory statistics are off: set FLAGS_enable_host_memory_stat=1")
    modes = args.modes.split(",")
    models = {m: build(cfg, m) for m in modes}
    stats = {m: [] for m in modes}
    stride = 2 if args.warm else 1
    for step in range(1 + args.rounds):
        order = modes[step % len(modes):] + modes[:step % len(modes)]
        for mode in order:
            if args.warm:
                gpt_model.train_step(*models[mode], cfg, stride * step, seed=0)
            cpu = time.process_time()
            result = gpt_model.train_step(*models[mode], cfg, stride * step + stride - 1, seed=0)
            stats[mode].append((result, time.process_time() - cpu))
        print(f"  round {step} done", file=sys.stderr)
    base = [x for x, _ in stats[BASE]]
    results = {}
    for mode in modes:
        s = [x for x, _ in stats[mode]]
        assert [x.loss for x in s] == [x.loss for x in base], f"{mode}: losses differ from none"
        results[mode] = {
            "forward_MiB": statistics.median(x.forward_bytes for x in s[1:]) / MiB,
            "peak_MiB": statistics.median(x.peak_bytes for x in s[1:]) / MiB,
            "step_s": statistics.median(x.seconds for x in s[1:]),
            "step_cpu_s": statistics.median(c for _, c in stats[mode][1:]),
            "best_step_s": min(x.seconds for x in s[1:]),
            "best_step_cpu_s": min(c for _, c in stats[mode][1:]),
            "step_cpu_s_all": [c for _, c in stats[mode][1:]],
        }
    b = results[BASE]
    print(f"{'mode (medians; best-of ratios)':34s} {'fwd MiB':>8s} {'x none':>7s} {'peak MiB':>9s} "
          f"{'wall s':>7s} {'x none':>7s} {'cpu s':>7s} {'x none':>7s} {'best wall':>9s} {'best cpu':>9s}")
    for mode, r in results.items():
        print(f"{mode:34s} {r['forward_MiB']:8.1f} {r['forward_MiB'] / b['forward_MiB']:7.3f} "
              f"{r['peak_MiB']:9.1f} {r['step_s']:7.3f} {r['step_s'] / b['step_s']:7.3f} "
              f"{r['step_cpu_s']:7.3f} {r['step_cpu_s'] / b['step_cpu_s']:7.3f} "
              f"{r['best_step_s'] / b['best_step_s']:9.3f} "
              f"{r['best_step_cpu_s'] / b['best_step_cpu_s']:9.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
