"""Plan time against depth: ``planner.plan`` at budget 0.5 on PaddleFormers' Llama (hidden
256, seq 256, batch 4, 8 heads, 4 KV heads) at 2, 4, 8, 16 and 32 layers, for the checkout
at ``REPO``: wall clock, this process's CPU time, and each stage's (``Plan.timings`` where
the checkout has it), with the step time
without recompute beside it (what a whole-step measurement costs at that depth).

    python benchmarks/plan_depth.py REPO [--layers 2,4,8,16,32] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

os.environ.setdefault("FLAGS_enable_host_memory_stat", "1")  # before Paddle is imported

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("repo")
parser.add_argument("--layers", default="2,4,8,16,32")
parser.add_argument("--hidden", type=int, default=256)
parser.add_argument("--json", metavar="FILE")
ARGS = parser.parse_args()
sys.argv = sys.argv[:1] + [ARGS.repo, "--rounds", "0"]  # plan_time.py reads its own arguments
sys.path[:0] = [ARGS.repo, str(Path(__file__).resolve().parent)]

import frontier  # noqa: E402
import paddle  # noqa: E402
import plan_time  # noqa: E402  (this directory's: its subjects and stage timers)

from paddle_recompute.bench import HostMemory  # noqa: E402


def main() -> None:
    paddle.set_device("cpu")
    frontier.CLOCK[0] = "cpu"
    memory = HostMemory()
    rows = {}
    for n in (int(k) for k in ARGS.layers.split(",")):
        subject = frontier.Subject("llama", argparse.Namespace(
            vocab=512, hidden=ARGS.hidden, large_hidden=768, heads=8, kv_heads=4, blocks=n,
            seq=256, batch=4, dropout=0.1))
        frontier._held(subject, memory)
        none_held, _ = frontier._held(subject, memory)
        step_s = statistics.median(frontier._step(subject)[0] for _ in range(3))
        p, timing = plan_time.plan_once(subject, int(0.5 * none_held))
        rows[n] = {**timing, "step_cpu_s": step_s, "choices": [c.option for c in p.choices],
                   "load_average": os.getloadavg()}
        print(n, json.dumps(rows[n]), flush=True)
        if ARGS.json:
            Path(ARGS.json).write_text(json.dumps({"args": vars(ARGS), "results": rows}, indent=1))
    base = rows.get(4)
    if base:
        for n, r in rows.items():
            print(f"| {n} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['cpu_s'] / base['cpu_s']:.2f} | "
                  f"{1e3 * r['step_cpu_s']:.0f} |")


if __name__ == "__main__":
    main()
