"""Stress test of recompute under threads, in fresh processes (NOTE [ Threads ] in _core/hooks.py).

Each run is a new Python process that trains small models (the workloads of
``paddle_recompute/_bench/threads.py``, shared with ``tests/core/test_threads.py``) in threads
started together, with a tiny switch interval (so the interpreter interleaves them inside
regions, reruns and hooks), and compares every loss, gradient and final parameter bit for bit with the
same jobs run one after another in that process.  Two phases per run:

- mixed: regions open and close in some threads while others train plainly; both modes,
  nesting, a policy with ``tag`` and ``no_recompute``, ``save_on_cpu``, user and raw
  saved-tensor hooks, a ``PyLayer`` that saves a non-tensor, and the MindSpore layer
  (a recomputed Cell and a recomputed Primitive).  No randomness.
- dropout: one thread trains with dropout inside regions (both modes); the others train
  without randomness (plainly, and with regions that do not replay the RNG).  Paddle's
  generators are process-wide, so only one thread may draw (docs/modes-and-state.md, Threads).

The parent reports crashes (a signal or an unexpected exit code), hangs (no exit within
``--timeout``), mismatches, and the time of every run, and writes them as JSON::

    python benchmarks/stress_threads.py --runs 300 --jobs 2 \\
        --json benchmarks/results/stress_threads_cpu.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

STEPS = 6


def worker(run: int) -> int:
    """One run: reference jobs one after another, then the same jobs in threads."""
    import random

    from paddle_recompute.bench import threads

    interval = 1e-6 if run % 2 else 1e-5
    mismatches, errors = [], []
    for phase, names in threads.PHASES.items():
        names = list(names)
        random.Random(run).shuffle(names)  # a different start order every run
        seeds = [run * 100 + i for i in range(len(names))]
        reference = [threads.trainer(n, STEPS, s)() for n, s in zip(names, seeds, strict=True)]
        got, failed = threads.run_concurrently(
            [threads.trainer(n, STEPS, s) for n, s in zip(names, seeds, strict=True)], interval)
        errors += [f"{phase}: {type(e).__name__}: {e}" for _, e in failed]
        mismatches += [f"{phase}: {name}" for name, want, have in zip(names, reference, got, strict=True)
                       if threads.mismatches(want, have)]
    print(json.dumps({"mismatches": mismatches, "errors": errors}))
    return 1 if mismatches or errors else 0


def _one(run: int, timeout: float) -> dict:
    start = time.perf_counter()
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", str(run)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"run": run, "outcome": "hang", "seconds": round(time.perf_counter() - start, 2)}
    seconds = round(time.perf_counter() - start, 2)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    report = json.loads(lines[-1]) if lines else None
    if proc.returncode not in (0, 1) or report is None:
        return {"run": run, "outcome": "crash", "rc": proc.returncode, "seconds": seconds,
                "stderr": proc.stderr[-2000:]}
    outcome = "ok" if proc.returncode == 0 else ("mismatch" if report["mismatches"] else "error")
    row = {"run": run, "outcome": outcome, "seconds": seconds}
    if outcome != "ok":
        row.update(report)
    return row


def _phases() -> dict:
    from paddle_recompute.bench import threads

    return threads.PHASES


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="processes to run (default 20)")
    parser.add_argument("--jobs", type=int, default=2, help="processes at once (default 2)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds before a run counts as hung")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        return worker(args.worker)
    start = time.perf_counter()
    with ThreadPoolExecutor(args.jobs) as pool:
        rows = []
        for row in pool.map(lambda r: _one(r, args.timeout), range(args.runs)):
            rows.append(row)
            if row["outcome"] != "ok":
                print(json.dumps(row), flush=True)
            if len(rows) % 10 == 0:
                print(f"{len(rows)}/{args.runs} runs", flush=True)
    counts = {k: sum(r["outcome"] == k for r in rows) for k in ("ok", "crash", "hang", "mismatch", "error")}
    seconds = [r["seconds"] for r in rows]
    result = {
        "command": "python benchmarks/stress_threads.py " + " ".join(
            a for a in sys.argv[1:] if a != "--json" and not a.endswith(".json")),
        "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                 text=True, cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip(),
        "python": platform.python_version(), "machine": platform.machine(),
        "phases": _phases(), "steps_per_job": STEPS, "runs": args.runs, "jobs": args.jobs,
        **counts,
        "seconds_per_run": {"median": statistics.median(seconds), "max": max(seconds),
                            "min": min(seconds)},
        "wall_seconds": round(time.perf_counter() - start, 1),
        "not_ok": [r for r in rows if r["outcome"] != "ok"],
    }
    print(json.dumps({k: v for k, v in result.items() if k not in ("phases", "not_ok")}))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0 if counts["ok"] == args.runs else 1


if __name__ == "__main__":
    sys.exit(main())
