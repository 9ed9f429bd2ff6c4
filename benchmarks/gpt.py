"""GPT-style training step on CPU: time and memory of full recompute, ours vs Paddle's built-in.

Modes: no recompute, built-in ``paddle.distributed.fleet.utils.recompute`` (reentrant and
non-reentrant) and ours (reentrant and non-reentrant), each recomputing every transformer
block.  One model per mode, identical initial weights; rounds are interleaved (each mode
does step r, in rotating order, before any does step r + 1) and medians taken over the
rounds after the first (warm-up, optimizer state creation).  Losses must equal the
no-recompute run bit for bit: asserted for ours, reported for the built-in.

    python benchmarks/gpt.py [--blocks 8 --hidden 256 --heads 4 --seq 256 --batch 8]
                             [--rounds 3] [--json out.json]
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

import gpt_model  # noqa: E402
import numpy as np  # noqa: E402
from gpt_model import RUNNERS, GPTConfig, MiB  # noqa: E402

BASE, BUILTIN = "none", "builtin reentrant"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    defaults = GPTConfig()
    for name in ("blocks", "hidden", "heads", "seq", "batch", "vocab"):
        parser.add_argument(f"--{name}", type=int, default=getattr(defaults, name))
    parser.add_argument("--dropout", type=float, default=defaults.dropout)
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds after one warm-up round")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    return parser.parse_args()


def run_rounds(cfg: GPTConfig, rounds: int) -> tuple[dict, dict]:
    """StepStats per mode over 1 + ``rounds`` interleaved steps, and the error of failed modes."""
    modes = list(RUNNERS)
    models = {mode: gpt_model.build(cfg, mode, seed=0) for mode in modes}
    stats: dict = {mode: [] for mode in modes}
    failed: dict = {}
    for step in range(1 + rounds):
        for mode in modes[step % len(modes):] + modes[:step % len(modes)]:
            if mode in failed:
                continue
            try:
                stats[mode].append(gpt_model.train_step(*models[mode], cfg, step, seed=0))
            except Exception as exc:  # the built-in misbehaving: report it, keep going
                failed[mode] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:100]}"
        print(f"  round {step} done" + (" (warm-up)" if step == 0 else ""), file=sys.stderr)
    return stats, failed


def loss_check(stats: dict) -> dict:
    """Per mode: 'equal' when every loss equals the no-recompute loss bit for bit, else the gap."""
    reference = np.array([s.loss for s in stats[BASE]])
    out = {}
    for mode, steps in stats.items():
        losses = np.array([s.loss for s in steps])
        if len(losses) == len(reference) and np.array_equal(losses, reference):
            out[mode] = "equal"
        else:
            n = min(len(losses), len(reference))
            out[mode] = f"DIFFER (max |d| {np.max(np.abs(losses[:n] - reference[:n]), initial=0):.3g})"
    return out


def summarize(stats: dict, failed: dict) -> dict:
    """Medians over the timed rounds, with ratios to no recompute and to the built-in reentrant."""
    rows = {}
    for mode, steps in stats.items():
        timed = steps[1:]
        if mode in failed or not timed:
            rows[mode] = {"error": failed.get(mode, "no timed rounds")}
            continue
        rows[mode] = {
            "step_ms": 1e3 * statistics.median(s.seconds for s in timed),
            "step_ms_all": [1e3 * s.seconds for s in timed],
            "forward_mib": statistics.median(s.forward_bytes for s in timed) / MiB,
            "peak_mib": statistics.median(s.peak_bytes for s in timed) / MiB,
            "retained_mib": statistics.median(s.retained_bytes for s in timed) / MiB,
            "losses": [s.loss for s in steps],
        }
    for row in rows.values():
        for key in ("step_ms", "forward_mib", "peak_mib"):
            if key in row:
                for ref in (BASE, BUILTIN):
                    ref_value = rows[ref].get(key)
                    row[f"{key}/{ref}"] = row[key] / ref_value if ref_value else None
    return rows


def _cell(row: dict, key: str, fmt: str) -> str:
    ratios = [row.get(f"{key}/{ref}") for ref in (BASE, BUILTIN)]
    text = " / ".join("–" if r is None else f"{r:.2f}x" for r in ratios)
    return f"{row[key]:{fmt}} | {text}"


def print_table(rows: dict, losses: dict) -> None:
    """Markdown table: each measure with its ratios (to none / to the built-in reentrant)."""
    print("| mode | step ms | vs none / builtin-re | fwd activations MiB | vs none / builtin-re "
          "| peak MiB | vs none / builtin-re | retained MiB/step | losses vs none |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for mode, row in rows.items():
        if "error" in row:
            print(f"| {mode} | failed: {row['error']} | | | | | | | {losses.get(mode, '')} |")
            continue
        print(f"| {mode} | {_cell(row, 'step_ms', '.0f')} | {_cell(row, 'forward_mib', '.1f')} | "
              f"{_cell(row, 'peak_mib', '.1f')} | {row['retained_mib']:.2f} | {losses[mode]} |")


def main() -> None:
    args = parse_args()
    cfg = GPTConfig(vocab=args.vocab, hidden=args.hidden, heads=args.heads, blocks=args.blocks,
                    seq=args.seq, batch=args.batch, dropout=args.dropout)
    if not gpt_model.memory_stats_enabled():
        raise SystemExit("host memory statistics are off: run with FLAGS_enable_host_memory_stat=1")
    print(f"GPT on CPU: {cfg}; 1 warm-up + {args.rounds} interleaved rounds, medians\n")
    stats, failed = run_rounds(cfg, args.rounds)
    losses = loss_check(stats)
    rows = summarize(stats, failed)
    print_table(rows, losses)
    print("\nfwd activations: host memory held after the forward (loss computed) minus before it;"
          "\npeak: highest host allocation during forward + backward + AdamW update, minus the "
          "level before the forward;\nretained: still held after the step minus before it "
          "(optimizer state exists from round 0, so anything above 0 is a leak).")
    for mode in ("ours reentrant", "ours non-reentrant"):
        assert losses[mode] == "equal", f"{mode}: losses differ from no recompute: {losses[mode]}"
    print("\nOurs: losses bit-for-bit equal to no recompute (asserted).")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"config": vars(cfg), "rounds": args.rounds, "modes": rows,
                       "losses_vs_none": losses}, fh, indent=2)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
