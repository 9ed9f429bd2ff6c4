"""Peak memory of a training loop's steps, where the last step's loss lives through this step.

A training loop writes ``loss = model(x); loss.backward(); ...`` and so holds the last
step's loss, and with it its graph, until this step's forward has returned.  The graph of
a recompute region holds its frame: before NOTE [ Inputs only for a rerun ], every region
held its inputs (the checkpoints) there, so each step's forward peaked with the last step's
checkpoints on top of its own.  Plain Paddle frees what its graph saved when the backward
runs, so it pays nothing of the kind; neither does this library now.

On PaddleFormers' Llama (the frontier benchmark's model: 4 layers, hidden 512, seq 256,
batch 4, CPU), every decoder layer a region, ``--steps`` steps of that loop; per mode: the
peaks of Paddle's host allocator during each step's forward (with the loss) and backward
after the first step, and the bytes still
allocated once its backward has run (the loss alive), both over the bytes allocated before
the loop (the parameters' gradients are made by a step before the first mode).  Modes: no
recompute, this library's non-reentrant and reentrant regions, and Paddle's built-in
``recompute`` in both modes (``paddle.distributed.fleet.utils``).

    python benchmarks/loop_memory.py [--steps 3] [--hidden 512 --seq 256 ...] [--json out.json]
"""

from __future__ import annotations

import functools
import gc
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("FLAGS_enable_host_memory_stat", "1")  # before Paddle is imported
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's package

import frontier  # noqa: E402  (this directory: the Llama subject)
import paddle  # noqa: E402
from paddle.distributed.fleet.utils import recompute as builtin_recompute  # noqa: E402

from paddle_recompute import recompute  # noqa: E402
from paddle_recompute.bench import HostMemory  # noqa: E402
from paddle_recompute.planner import route_forwards  # noqa: E402

MiB = 2**20


def _region(run, forward):
    return lambda *args, **kwargs: run(forward, *args, **kwargs)


MODES = {
    "none": None,
    "ours non-reentrant": functools.partial(recompute, use_reentrant=False),
    "ours reentrant": functools.partial(recompute, use_reentrant=True),
    "builtin non-reentrant": functools.partial(builtin_recompute, use_reentrant=False),
    "builtin reentrant": functools.partial(builtin_recompute, use_reentrant=True),
}


def loop(subject: frontier.Subject, run, steps: int) -> dict:
    """Peak and after-backward bytes of steps 2.. of the loop, over the bytes allocated before
    the first."""
    memory = HostMemory()
    swaps = [(b, functools.partial(_region, run)) for b in subject.blocks] if run else []
    forward, backward, after = [], [], []
    loss = None
    gc.collect()
    start = memory.current()
    with route_forwards(swaps):
        for step in range(steps):
            gc.collect()
            memory.reset_peak()
            paddle.seed(step)
            loss = subject.loss(subject.tokens)  # the last step's loss dies here, as in a loop
            forward.append(memory.peak() - start)
            memory.reset_peak()
            loss.backward()
            backward.append(memory.peak() - start)
            subject.model.clear_gradients()
            after.append(memory.current() - start)
    value = float(loss)
    del loss
    return {"forward_peak_mib": max(forward[1:]) / MiB, "backward_peak_mib": max(backward[1:]) / MiB,
            "peak_mib": max(forward[1:] + backward[1:]) / MiB, "after_backward_mib": max(after[1:]) / MiB,
            "last_loss": value}


def main() -> None:
    args = frontier.llama_arguments(__doc__, "steps", 3)
    subject = frontier.llama_subject(args)
    frontier._step(subject)  # the parameters' gradients are made here, before any mode
    results = {}
    for name, run in MODES.items():
        try:
            results[name] = loop(subject, run, max(args.steps, 2))
        except Exception as exc:  # the built-in fails on some calls: say so, go on (ours: raise)
            if not name.startswith("builtin"):
                raise
            results[name] = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"}
    none = results["none"]["peak_mib"]
    print("| mode | step peak (MiB) | vs none | forward peak | backward peak "
          "| held after backward, loss alive (MiB) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, r in results.items():
        if "error" in r:
            print(f"| {name} | failed: {r['error']} | | | | |")
        else:
            print(f"| {name} | {r['peak_mib']:.1f} | {r['peak_mib'] / none:.3f}x | "
                  f"{r['forward_peak_mib']:.1f} | {r['backward_peak_mib']:.1f} | "
                  f"{r['after_backward_mib']:.1f} |")
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "results": results}, indent=1))


if __name__ == "__main__":
    main()
