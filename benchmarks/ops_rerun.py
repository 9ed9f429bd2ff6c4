"""Where an operator-level region's rerun time goes: the model's prediction against the rerun.

On PaddleFormers' Llama (the frontier benchmark's model) the decoder layers' operators are
recorded as the planner records them (``bench.operator_graphs``) and the exact keep /
recompute frontier solved (NOTE [ Operator model ]; ``bench.predicted_reruns``).  For points
holding a fraction of a layer's saved-tensor bytes (``--fractions``), it reports:

  * the model (NOTE [ Ancestor model ]): the rerun's time as a fraction of a full rerun's,
    the operators the rerun passes (up to its last uncovered saved tensor), of those the
    ones it skips (kept) and the ones it runs (the ancestors of what backward needs); and
    what the same kept set costs when the rerun runs every operator it passes but the kept
    ones (the prefix rerun before NOTE [ Dead operators ]);
  * the measurement: every layer a region under that point's ``OpPolicy``, one forward and
    backward per round (rounds interleaved with a ``recompute_all`` region on every layer),
    each region's rerun time over the ``recompute_all`` rerun of the same round (median),
    the operators the rerun observed, ran, skipped, rebuilt and left out, and the bytes held.

    python benchmarks/ops_rerun.py [--rounds 3] [--hidden 512 --seq 256] [--json out.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
from pathlib import Path

os.environ.setdefault("FLAGS_enable_host_memory_stat", "1")  # before Paddle is imported
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's package

import frontier  # noqa: E402  (this directory: the Llama subject and its step)
import paddle  # noqa: E402

from paddle_recompute import bench, planner, policies  # noqa: E402
from paddle_recompute.policies import OpPolicy  # noqa: E402


def model_rows(graph, fractions: list) -> list:
    return [dataclasses.asdict(p) for p in bench.predicted_reruns(graph, fractions)]


def measure(subject, graph, rows: list, rounds: int) -> None:
    names = tuple(o.name for o in graph.ops)
    configs = {"recompute_all": policies.recompute_all}
    configs.update({f"{r['fraction']:g}": OpPolicy(names, frozenset(r["keep"])) for r in rows})
    samples: dict = {k: [] for k in configs}
    for r in range(rounds + 1):  # round 0 warms up
        order = list(configs)[r % len(configs):] + list(configs)[:r % len(configs)]
        for label in order:
            undo = frontier._policy(subject, configs[label])
            try:
                with bench.measured_regions() as finished:
                    frontier._step(subject)
            finally:
                undo()
            if r:
                samples[label].append(finished)
            else:
                finished.clear()
    for r_i in range(rounds):
        base = sum(f.rerun_ns for f in samples["recompute_all"][r_i])
        for row in rows:
            frames = samples[f"{row['fraction']:g}"][r_i]
            row.setdefault("rerun_ratios", []).append(sum(f.rerun_ns for f in frames) / base)
    for row in rows:
        frames = samples[f"{row['fraction']:g}"][-1]
        row["measured_time"] = statistics.median(row["rerun_ratios"])
        row["observed"] = sum(x.observed for f in frames for x in f.reruns) / len(frames)
        row["skipped_measured"] = sum(x.skipped for f in frames for x in f.reruns) / len(frames)
        row["rebuilt"] = sum(x.rebuilt for f in frames for x in f.reruns) / len(frames)
        row["ran"] = sum(x.ran for f in frames for x in f.reruns) / len(frames)
        row["left_out"] = sum(x.left_out for f in frames for x in f.reruns) / len(frames)
        row["held_mib"] = sum(f.held_bytes() for f in frames) / len(frames) / 2**20
    for cfg in samples.values():
        for finished in cfg:
            finished.clear()  # each frame is in the list it holds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--fractions", default="0.25,0.5,0.75")
    frontier.add_llama_size(parser)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    paddle.set_device("cpu")
    subject = frontier.llama_subject(args)
    prof = planner.profile(subject.loss, subject.tokens, blocks=subject.blocks, repeats=1)
    graph = bench.operator_graphs(subject.loss, subject.tokens, blocks=subject.blocks,
                                  profile=prof)[prof.blocks[0]]
    rows = model_rows(graph, [float(f) for f in args.fractions.split(",")])
    measure(subject, graph, rows, args.rounds)
    print(f"{len(graph.ops)} operators, {len(graph.slots)} saved tensors per layer")
    print("| kept bytes (of a layer's saved) | model: rerun / full's | same kept set, prefix rerun | "
          "passed / skipped / run (model) | measured rerun / recompute_all's | "
          "observed / ran / skipped / rebuilt / left out | held MiB |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['memory']:.2f} | {r['model_time']:.2f} | {r['prefix_time']:.2f} | "
              f"{r['passed']} / {r['skipped']} / {r['run']} | {r['measured_time']:.2f} | "
              f"{r['observed']:.0f} / {r['ran']:.0f} / {r['skipped_measured']:.0f} / "
              f"{r['rebuilt']:.0f} / {r['left_out']:.0f} | {r['held_mib']:.1f} |")
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "ops": [o.name for o in graph.ops],
                                               "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
