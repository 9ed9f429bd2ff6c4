"""Stress test of recompute under threads, in fresh processes (NOTE [ Threads ] in _core/hooks.py).

Each run is a new Python process that trains small models in threads started together,
with a tiny switch interval (so the interpreter interleaves them inside regions, reruns
and hooks), and compares every loss, gradient and final parameter bit for bit with the
same jobs run one after another in that process.  Two phases per run:

- mixed: regions open and close in some threads while others train plainly; both modes,
  nesting, a policy with ``tag`` and ``no_recompute``, ``save_on_cpu``, user and raw
  saved-tensor hooks, a ``PyLayer`` that saves a non-tensor, and the MindSpore layer
  (a recomputed Cell and a recomputed Primitive).  No randomness.
- dropout: one thread trains with dropout inside regions (both modes); the others train
  without randomness (plainly, and with regions that do not replay the RNG).  Paddle's
  generators are process-wide, so only one thread may draw (README, Threads).

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

DIM = 16
STEPS = 6


def _workloads():
    """name -> (build(seed) -> state, step(state, x) -> loss); built in the main thread."""
    import numpy as np
    import paddle
    from paddle import nn
    from paddle.autograd import PyLayer

    import paddle_recompute as pr
    import paddle_recompute.mindspore as ms
    from paddle_recompute import policies
    from paddle_recompute.mindspore import nn as msnn
    from paddle_recompute.mindspore import ops as msops

    class Block(nn.Layer):
        def __init__(self, p=0.0):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(DIM, 2 * DIM), nn.Linear(2 * DIM, DIM)
            self.norm = nn.LayerNorm(DIM)
            self.drop = nn.Dropout(p) if p else None

        def forward(self, x):
            h = paddle.tanh(self.fc1(self.norm(x)))
            if self.drop is not None:
                h = self.drop(h)
            return x + self.fc2(h)

    class Tagged(Block):
        def forward(self, x):
            h = pr.tag(self.fc1(self.norm(x)), "h")
            return x + pr.no_recompute(self.fc2, paddle.tanh(h))

    class Scale(PyLayer):  # saves a non-tensor: plain Paddle keeps it as it is
        @staticmethod
        def forward(ctx, x, factor):
            ctx.save_for_backward(x, factor)
            return x * factor

        @staticmethod
        def backward(ctx, grad):
            _, factor = ctx.saved_tensor()
            return grad * factor

    class MsNet(msnn.Cell):
        def __init__(self):
            super().__init__()
            self.fc1 = msnn.Dense(DIM, 2 * DIM)
            self.fc1.recompute()
            self.act = msops.ReLU()
            self.act.recompute()
            self.fc2 = msnn.Dense(2 * DIM, DIM)

        def construct(self, x):
            return self.fc2(self.act(self.fc1(x)))

    def blocks(kind=Block, **kw):
        return nn.LayerList([kind(**kw) for _ in range(3)])

    def each(mode, **kw):
        def forward(model, x):
            for b in model:
                x = pr.recompute(b, x, use_reentrant=mode, **kw)
            return x
        return forward

    def nested(model, x):
        def outer(h):
            h = pr.recompute(model[0], h)
            return pr.recompute(model[1], h, use_reentrant=False)
        return model[2](pr.recompute(outer, x, use_reentrant=False))

    def plain(model, x):
        for b in model:
            x = b(x)
        return x

    def on_cpu(model, x):
        with pr.save_on_cpu():
            return plain(model, x)

    def user_hooks(model, x):
        with pr.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
            x = model[0](x)
            x = pr.recompute(model[1], x, use_reentrant=False)
        with paddle.autograd.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            return model[2](x)

    def pylayer(model, x):
        return plain(model, Scale.apply(x, 0.5))

    def dropout(model, x):
        x = pr.recompute(model[0], x, use_reentrant=False)
        x = pr.recompute(model[1], x, use_reentrant=True)
        return model[2](x)

    def ms_loss(model, x):
        loss_fn = lambda t: (model(t) ** 2).mean()  # noqa: E731
        loss, grads = ms.value_and_grad(loss_fn, None, model.trainable_params())(x)
        for p, g in zip(model.trainable_params(), grads, strict=True):
            p.grad = g  # the optimizer step of the job applies them
        return loss

    layer = {
        "non-reentrant": (blocks, each(False)),
        "reentrant": (blocks, each(True)),
        "nested": (blocks, nested),
        "policy+tag+no_recompute": (lambda: blocks(Tagged), each(
            False, policy=policies.save_any_of(policies.save_matmuls, policies.save_names("h")))),
        "save_on_cpu": (blocks, on_cpu),
        "user and raw hooks": (blocks, user_hooks),
        "plain": (blocks, plain),
        "plain 2": (blocks, plain),
        "plain PyLayer": (blocks, pylayer),
        "mindspore Cell/Primitive": (MsNet, None),
        "regions without RNG replay": (blocks, each(False, preserve_rng_state=False)),
        "dropout in regions": (lambda: blocks(p=0.3), dropout),
    }

    def trainer(name, seed):
        build, forward = layer[name]
        paddle.seed(seed)
        model = build()
        params = model.parameters() if forward is not None else model.trainable_params()
        opt = paddle.optimizer.SGD(learning_rate=0.05, parameters=params)
        rng = np.random.RandomState(seed)
        if forward is None:  # MindSpore's initialisers draw from their own seed: set the values
            for p in params:
                p.set_value(rng.standard_normal(p.shape).astype("float32") * 0.2)
        xs = [paddle.to_tensor(rng.standard_normal((4, DIM)).astype("float32")) for _ in range(3)]

        def job():
            if name == "dropout in regions":
                paddle.seed(seed + 1)  # the only thread that draws: its draws are its own
            out = []
            for step in range(STEPS):
                x = xs[step % len(xs)]
                if forward is None:
                    loss = ms_loss(model, x)
                else:
                    x.stop_gradient = False
                    loss = (forward(model, x) ** 2).mean()
                    loss.backward()
                    out.append(x.grad.numpy())
                    x.clear_gradient()
                out.append(loss.numpy())
                opt.step()
                opt.clear_grad()
            out.extend(p.numpy() for p in params)
            return out

        return job

    return trainer


PHASES = {
    "mixed": ["non-reentrant", "reentrant", "nested", "policy+tag+no_recompute", "save_on_cpu",
              "user and raw hooks", "plain", "plain 2", "plain PyLayer", "mindspore Cell/Primitive"],
    "dropout": ["dropout in regions", "plain", "plain 2", "regions without RNG replay"],
}


def _concurrently(jobs):
    import threading

    results, errors = [None] * len(jobs), []
    barrier = threading.Barrier(len(jobs))

    def run(i, job):
        try:
            barrier.wait()
            results[i] = job()
        except BaseException as exc:  # noqa: BLE001  (reported as a failure of the run)
            errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=run, args=(i, job)) for i, job in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, errors


def worker(run: int) -> int:
    """One run: reference jobs one after another, then the same jobs in threads."""
    import random

    import numpy as np

    trainer = _workloads()
    sys.setswitchinterval(1e-6 if run % 2 else 1e-5)
    mismatches, errors = [], []
    for phase, names in PHASES.items():
        names = list(names)
        random.Random(run).shuffle(names)  # a different start order every run
        seeds = [run * 100 + i for i in range(len(names))]
        reference = [trainer(n, s)() for n, s in zip(names, seeds, strict=True)]
        got, failed = _concurrently([trainer(n, s) for n, s in zip(names, seeds, strict=True)])
        errors += [f"{phase}: {e}" for e in failed]
        for name, want, have in zip(names, reference, got, strict=True):
            if have is None or len(have) != len(want) or any(
                    not np.array_equal(a, b) for a, b in zip(want, have, strict=True)):
                mismatches.append(f"{phase}: {name}")
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
        "phases": PHASES, "steps_per_job": STEPS, "runs": args.runs, "jobs": args.jobs,
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
