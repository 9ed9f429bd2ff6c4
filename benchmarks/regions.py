"""The planner on models this repository did not write: regions from the call tree.

For every model in ``paddle.vision.models`` (small inputs each accepts, 10 classes),
``paddle.nn.Transformer`` (2 + 2 layers), a shared-layer model (ALBERT-style: one
``TransformerEncoderLayer`` called 4 times), a ``Sequential`` holding one layer instance
twice, and each PaddleFormers causal LM that trains on CPU, one run each:

  * profile once; plan at budget 0.5 and at the least memory any plan reaches (the plan
    that recomputes as much as possible; ``InfeasibleBudget`` names it);
  * predicted bytes (``Plan.predicted_bytes``) against measured: the host allocator's bytes
    held after the forward, less its outputs (``FLAGS_enable_host_memory_stat``);
  * predicted extra time (``Plan.extra_s``) against measured: forward + backward, rounds
    interleaved (none, plan 0.5, plan at the least), medians (at least ``--rounds``, more
    for fast models: about 1.5 s of steps per choice, at most 25);
  * the loss and every parameter's gradient equal to no recompute, bit for bit (asserted).

Goal (issue 22): at 0.5 every model fits, and its extra time is at most 0.6x that of the
plan at the least memory.

    python benchmarks/regions.py [--models densenet121,...] [--rounds 3] [--clock wall|cpu] [--json out.json]

Each ``MODEL`` here is also a CLI target, and each run checks it: ``paddle-recompute profile
benchmarks/regions.py:densenet121`` (and ``plan ... --budget 0.5`` where the CLI has it).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("FLAGS_enable_host_memory_stat", "1")  # before Paddle is imported
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's package

import numpy as np  # noqa: E402
import paddle  # noqa: E402
from paddle import nn  # noqa: E402

from paddle_recompute import planner  # noqa: E402
from paddle_recompute.bench import HostMemory, nbytes_of  # noqa: E402

_SIZES = {"inception_v3": 96, "googlenet": 192, "alexnet": 224, "lenet": 28}  # the least each takes


def _vision_names() -> list[str]:
    import paddle.vision.models as vm

    return [n for n in vm.__all__ if n[0].islower()]


class Albert(nn.Layer):
    """One encoder layer called ``depth`` times (ALBERT's cross-layer sharing)."""

    def __init__(self, d: int = 64, depth: int = 4):
        super().__init__()
        self.embed = nn.Linear(d, d)
        self.layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.1)
        self.depth = depth

    def forward(self, x):
        x = self.embed(x)
        for _ in range(self.depth):
            x = self.layer(x)
        return x


class Transformer(nn.Layer):
    def __init__(self, d: int = 64):
        super().__init__()
        self.net = nn.Transformer(d, 4, 2, 2, 2 * d, dropout=0.1)

    def forward(self, src, tgt):
        return self.net(src, tgt)


def _twice(d: int = 256):
    block = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, d), nn.Tanh())
    return nn.Sequential(nn.Linear(d, d), block, nn.ReLU(), block, nn.Linear(d, d))


def subject(name: str):
    """(model, inputs tuple, kwargs) of a benchmark model, seeded.  The models of this file
    take inputs whose step lasts milliseconds (a step of 0.3 ms is below what a loaded CPU
    times reliably)."""
    paddle.seed(0)
    if name == "transformer":
        return Transformer(), (paddle.randn([8, 64, 64]), paddle.randn([8, 48, 64])), {}
    if name == "albert":
        return Albert(), (paddle.randn([2, 32, 64]),), {}
    if name == "twice":
        return _twice(), (paddle.randn([512, 256]),), {}
    if name.startswith("pf_"):
        from paddle_recompute.bench import causal_lm

        model = causal_lm(name[3:], vocab=256, hidden=64, heads=4, kv_heads=2, layers=2, positions=64,
                          dropout=0.1)
        ids = paddle.randint(0, 256, [2, 64])
        return model, (), {"input_ids": ids, "labels": ids}
    import paddle.vision.models as vm

    size = _SIZES.get(name, 32)
    channels = 1 if name == "lenet" else 3
    model = getattr(vm, name)(num_classes=10) if name != "lenet" else vm.LeNet(num_classes=10)
    return model, (paddle.randn([2, channels, size, size]),), {}


def __getattr__(name: str):  # CLI targets: ``benchmarks/regions.py:<model>`` -> (model, inputs)
    if name.startswith("__"):
        raise AttributeError(name)

    def make():
        model, args, kwargs = subject(name)
        return model, kwargs if kwargs else (args if len(args) > 1 else args[0])

    return make


def _loss(out) -> paddle.Tensor:
    if isinstance(out, dict):
        return out["loss"]
    if isinstance(out, (tuple, list)):
        if isinstance(out[0], paddle.Tensor) and out[0].ndim == 0:
            return out[0]  # (loss, logits)
        return sum(o.astype("float32").mean() for o in out if isinstance(o, paddle.Tensor))
    return out.astype("float32").mean()


def _held(model, args, kwargs, memory: HostMemory) -> tuple[int, float, list]:
    gc.collect()
    paddle.seed(1)
    before = memory.current()
    out = model(*args, **kwargs)
    held = memory.current() - before - nbytes_of(out)
    loss = _loss(out)
    loss.backward()
    grads = [p.grad.numpy().copy() if p.grad is not None else None for p in model.parameters()]
    model.clear_gradients()
    return held, float(loss), grads


CLOCK = ["wall"]  # --clock: "wall" (the wall clock) or "cpu" (this process's CPU time)


def _step(model, args, kwargs) -> float:
    """One forward + backward: seconds by ``CLOCK`` (the wall clock is kept in ``_step.wall``)."""
    paddle.seed(1)
    start, cpu = time.perf_counter(), time.process_time()
    _loss(model(*args, **kwargs)).backward()
    _step.wall = time.perf_counter() - start
    seconds = time.process_time() - cpu if CLOCK[0] == "cpu" else _step.wall
    model.clear_gradients()
    return seconds


def cli(name: str) -> dict:
    """Run ``paddle-recompute profile`` (and ``plan``, where this checkout has it) on the model;
    exit codes."""
    import contextlib
    import importlib.util
    import io
    import tempfile

    from paddle_recompute.__main__ import main as cli_main

    target = f"{Path(__file__).resolve()}:{name}"
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()):
        out["profile"] = cli_main(["profile", target, "--json", f"{tmp}/p.json"])
        if importlib.util.find_spec("paddle_recompute._cli.plan") is not None:
            out["plan"] = cli_main(["plan", target, "--budget", "0.5", "-o", f"{tmp}/plan.json"])
    return out


def measure(name: str, rounds: int) -> dict:
    model, args, kwargs = subject(name)
    model.train()
    memory = HostMemory()
    _held(model, args, kwargs, memory)  # first call: caches a model keeps are made
    none_held, none_loss, none_grads = _held(model, args, kwargs, memory)
    prof = planner.profile(model, *args, repeats=1, **kwargs)
    try:
        planner.plan(model, *args, budget=0, profile=prof, **kwargs)
        least = 0
    except planner.InfeasibleBudget as exc:
        least = int(exc.minimum)
    plans = {"0.5": planner.plan(model, *args, budget=0.5, profile=prof, **kwargs),
             "least": planner.plan(model, *args, budget=least, profile=prof, **kwargs)}
    rows: dict = {"none": {"held": none_held}}
    for key, p in plans.items():
        with p.apply():
            held, loss, grads = _held(model, args, kwargs, memory)
        assert loss == none_loss, (name, key, loss, none_loss)
        for g, ref in zip(grads, none_grads, strict=True):
            if ref is not None:
                np.testing.assert_array_equal(g, ref, err_msg=f"{name} {key}")
        rows[key] = {"held": held, "predicted": p.predicted_bytes, "extra_pred_ms": 1e3 * p.extra_s,
                     "regions": len(p.choices), "options": _options(p)}
    times: dict = {k: [] for k in rows}
    walls: dict = {k: [] for k in rows}
    order = list(rows)
    rounds = min(max(rounds, int(1.5 / _step(model, args, kwargs))), 25)  # small models: more
    for r in range(rounds + 1):  # round 0 warms up
        for key in order[r % 3:] + order[:r % 3]:
            if key == "none":
                seconds = _step(model, args, kwargs)
            else:
                with plans[key].apply():
                    seconds = _step(model, args, kwargs)
            if r:
                times[key].append(seconds)
                walls[key].append(_step.wall)
    base = statistics.median(times["none"])
    for key in rows:
        rows[key]["ms"] = 1e3 * statistics.median(times[key])
        rows[key]["extra_ms"] = rows[key]["ms"] - 1e3 * base
        rows[key]["wall_ms"] = 1e3 * statistics.median(walls[key])
    extra_least = max(rows["least"]["extra_ms"], 1e-9)
    return {"cli": cli(name), "region_us": 1e6 * (prof.region_s or 0.0),
            "baseline_bytes": prof.total_bytes, "none_held": none_held,
            "least_fraction": least / max(prof.total_bytes, 1), "rows": rows,
            "fits": rows["0.5"]["held"] <= 0.5 * none_held,
            "time_ratio": rows["0.5"]["extra_ms"] / extra_least}


def _options(p) -> str:
    """The plan's regions by option (``full:12 run:3 ops:2``): which kinds it used."""
    count: dict = {}
    for c in p.choices:
        key = "run" if c.option == "run" else c.kind
        count[key] = count.get(key, 0) + 1
    return " ".join(f"{k}:{n}" for k, n in sorted(count.items()))


def _line(name: str, r: dict) -> str:
    mib = 2 ** 20
    if "infeasible" in r:
        return f"| {name} | | | | {r['least_fraction']:.3f} | | | | | | | | NO: 0.5 is below the least | | |"
    h, least = r["rows"]["0.5"], r["rows"]["least"]
    return (f"| {name} | {r['none_held'] / mib:.2f} | {h['predicted'] / r['baseline_bytes']:.3f} | "
            f"{h['held'] / max(r['none_held'], 1):.3f} | {r['least_fraction']:.3f} | "
            f"{least['held'] / max(r['none_held'], 1):.3f} | {r['rows']['none']['ms']:.1f} | "
            f"{h['extra_pred_ms']:.1f} | {h['extra_ms']:.1f} | {least['extra_pred_ms']:.1f} | "
            f"{least['extra_ms']:.1f} | "
            f"{r['time_ratio']:.2f} | {'yes' if r['fits'] else 'NO'} | {h.get('options', '')} | "
            + " ".join(f"{k}:{'ok' if v == 0 else v}" for k, v in r["cli"].items()) + " |")


HEADER = ("| model | none MiB | 0.5 predicted | 0.5 measured | least predicted | least measured | "
          "step ms | 0.5 extra ms predicted | 0.5 extra ms measured | least extra ms predicted | "
          "least extra ms measured | extra 0.5 / least | fits | 0.5 regions | CLI |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    families = ["pf_" + f for f in ("llama", "ernie4_5", "phi3", "gemma3_text", "gpt_oss")]
    parser.add_argument("--models", default=",".join(_vision_names() + ["transformer", "albert",
                                                                          "twice"] + families))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("--table", metavar="FILE", help="print the table of a saved --json run")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="time steps by the wall clock (default) or by this process's CPU time "
                             "(every thread's; steadier on a shared machine, where the wall clock "
                             "is mostly waiting for other processes); the JSON keeps both")
    args = parser.parse_args()
    if args.table:
        print(HEADER)
        for name, result in json.loads(Path(args.table).read_text())["results"].items():
            print(_line(name, result))
        return
    CLOCK[0] = args.clock
    paddle.set_device("cpu")
    print(HEADER, flush=True)
    results, commit = {}, _commit()  # the code that runs: read before any model
    for name in args.models.split(","):
        start = {"load_average": os.getloadavg(), "wall_s": time.perf_counter()}
        try:
            results[name] = measure(name, args.rounds)
        except planner.InfeasibleBudget as exc:  # the goal's budget is below the model's least
            results[name] = {"infeasible": str(exc), "least_fraction": exc.minimum / exc.budget * 0.5}
        results[name]["run"] = {"commit": commit, "load_average_start": start["load_average"],
                                "load_average_end": os.getloadavg(),
                                "wall_s": time.perf_counter() - start["wall_s"]}
        print(_line(name, results[name]), flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps({"args": vars(args), "results": results}, indent=1))


def _commit() -> str:
    """This checkout's commit (``+`` when its tracked files differ from it), for the JSON."""
    import subprocess

    root = Path(__file__).resolve().parent.parent
    git = ["git", "-C", str(root)]
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run([*git, "diff", "--quiet", "HEAD"], capture_output=True).returncode
    return head.stdout.strip() + ("+" if dirty else "")


if __name__ == "__main__":
    main()
