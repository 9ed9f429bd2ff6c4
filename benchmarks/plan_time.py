"""Plan time and plan quality: ``planner.plan`` at budget 0.5 on the frontier's models, for
the checkout at ``REPO``.

Per model (``benchmarks/frontier.py``'s subjects: ``llama`` = PaddleFormers' Llama, 4 layers,
hidden 512, seq 256, batch 4; ``llama_large`` hidden 768; ``gpt`` the GPT harness at the same
sizes; ``resnet50`` 64x64 images, batch 4, its bottlenecks as blocks):

  * plan time: one ``planner.plan(loss, tokens, budget=0.5 x none's held bytes, blocks=...)``
    (``--regions calls``: without ``blocks``, so over the call tree, the default; ``--regions
    blocks,calls``: both, measured side by side) from scratch (profile included), wall clock
    and this process's CPU time, with where it went (``Plan.timings``; a checkout without it
    reports the totals only);
  * plan quality, measured side by side: none, full recompute and the plans, rounds
    interleaved, memory held after the forward (less the outputs) and the step's CPU time;
    the plan's extra step time as a fraction of full recompute's (median of the rounds'
    ratios, and their quartiles: one CPU step varies by about 8% on this machine, as much
    as a plan's extra time on ResNet-50), with a 90% bootstrap interval of that estimate
    (the rounds resampled with replacement: how far the rounds' noise leaves it uncertain);
    the loss of every step equal to none's bit for bit (asserted).

    python benchmarks/plan_time.py REPO --models llama,gpt [--rounds 6] [--regions blocks,calls]
        [--json out.json]

Run it on two checkouts (before and after a change) to compare; the machine is shared, so
CPU time is the steadier clock (wall is mostly waiting for other processes under load).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("FLAGS_enable_host_memory_stat", "1")  # before Paddle is imported


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repo", help="the checkout whose package plans")
    parser.add_argument("--models", default="llama,llama_large,gpt,resnet50")
    parser.add_argument("--rounds", type=int, default=6, help="quality rounds (0: plan time only)")
    parser.add_argument("--regions", default="blocks",
                        help="comma-separated, each planned and measured side by side: blocks "
                             "(plan(..., blocks=the model's blocks)), calls (plan(...) with its "
                             "default regions, from the call tree)")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    unknown = set(args.regions.split(",")) - {"blocks", "calls"}
    if unknown:
        parser.error(f"--regions: unknown {sorted(unknown)}; use blocks and/or calls")
    return args


ARGS = _arguments()
sys.path[:0] = [ARGS.repo, ARGS.repo + "/benchmarks"]  # that checkout's package and models

import frontier  # noqa: E402
import paddle  # noqa: E402

from paddle_recompute import planner  # noqa: E402
from paddle_recompute.bench import HostMemory  # noqa: E402


def _subject(name: str):
    return frontier.Subject(name, argparse.Namespace(
        vocab=512, hidden=512, large_hidden=768, heads=8, kv_heads=4, blocks=4, seq=256, batch=4,
        dropout=0.1))


def plan_once(subject, budget: int, regions: str = "blocks") -> tuple:
    wall, cpu = time.perf_counter(), time.process_time()
    where = {"blocks": subject.blocks} if regions == "blocks" else {}
    p = planner.plan(subject.loss, subject.tokens, budget=budget, **where)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    timings = getattr(p, "timings", None)
    return p, {"wall_s": wall, "cpu_s": cpu, "stages": timings}


def quality(subject, plans: dict, rounds: int, memory: HostMemory, none_held: int,
            none_loss: float) -> dict:
    """none, full recompute and each plan (label -> Plan), rounds interleaved in rotating order."""
    n = len(subject.blocks)
    choices = {"none": lambda: (lambda: None), "full": lambda: frontier._layer_level(subject, n)}
    choices.update({f"plan {k}": (lambda p=p: planner.apply_plan(None, p).remove)
                    for k, p in plans.items()})
    held, times = {}, {k: [] for k in choices}
    for name, apply in choices.items():
        undo = apply()
        held[name], loss = frontier._held(subject, memory)
        undo()
        assert loss == none_loss, (subject.name, name, loss, none_loss)
    names = list(choices)
    for r in range(rounds + 1):  # round 0 warms up
        for name in names[r % len(names):] + names[:r % len(names)]:
            undo = choices[name]()
            seconds, loss = frontier._step(subject)
            undo()
            assert loss == none_loss, (subject.name, name, loss, none_loss)
            if r:
                times[name].append(seconds)
    ratio = _ratios(times, range(rounds))
    full = ratio["full"] - 1
    out = {"full_memory": held["full"] / none_held, "full_time": ratio["full"],
           "none_ms": 1e3 * statistics.median(times["none"]), "bit_exact": True,
           "ms": {k: [1e3 * t for t in v] for k, v in times.items()}}
    for k, p in plans.items():
        name = f"plan {k}"
        per_round = [(t / b - 1) / full for t, b in zip(times[name], times["none"], strict=True)]
        out[k] = {"memory": held[name] / none_held, "time": ratio[name],
                  "extra_of_full": (ratio[name] - 1) / full if full > 0 else float("nan"),
                  "extra_of_full_quartiles": (statistics.quantiles(per_round, n=4)[::2]
                                              if full > 0 and rounds > 1 else None),
                  "extra_of_full_90": _interval(times, name, rounds),
                  "choices": [[c.block, c.option] for c in p.choices]}
    return out


def _ratios(times: dict, rounds) -> dict:
    """Each choice's median step time over none's in the same round, over ``rounds``."""
    return {k: statistics.median(v[r] / times["none"][r] for r in rounds) for k, v in times.items()}


def _interval(times: dict, name: str, rounds: int, draws: int = 2000) -> list | None:
    """5th and 95th percentiles of ``name``'s extra time over full's, the rounds resampled."""
    rng = random.Random(0)
    got = []
    for _ in range(draws):
        ratio = _ratios(times, [rng.randrange(rounds) for _ in range(rounds)])
        if ratio["full"] > 1:
            got.append((ratio[name] - 1) / (ratio["full"] - 1))
    if len(got) < draws // 2:
        return None
    got.sort()
    return [got[len(got) // 20], got[len(got) * 19 // 20]]


def main() -> None:
    paddle.set_device("cpu")
    frontier.CLOCK[0] = "cpu"
    memory = HostMemory()
    results = {}
    for name in ARGS.models.split(","):
        subject = _subject(name)
        frontier._held(subject, memory)  # first call: caches a model keeps are made
        none_held, none_loss = frontier._held(subject, memory)
        plans, row = {}, {"plan_time": {}, "load_average": os.getloadavg()}
        for regions in ARGS.regions.split(","):
            plans[regions], row["plan_time"][regions] = plan_once(subject, int(0.5 * none_held),
                                                                  regions)
            print(name, regions, "plan time", json.dumps(row["plan_time"][regions]), flush=True)
        if ARGS.rounds:
            row["quality"] = quality(subject, plans, ARGS.rounds, memory, none_held, none_loss)
            print(name, json.dumps({k: v for k, v in row["quality"].items() if k != "ms"}),
                  flush=True)
        results[name] = row
        if ARGS.json:
            Path(ARGS.json).write_text(json.dumps({"args": vars(ARGS), "results": results}, indent=1))


if __name__ == "__main__":
    main()
