"""Is the plan on the frontier?  The planner against every simpler choice, per budget.

For each model and each budget (fractions of the activation memory no recompute holds
after the forward):
  * simpler choices: uniform layer-level recompute of the first ``k`` of ``n`` blocks
    (``k=0`` is none, ``k=n`` full; every ``k`` up to 8 blocks, else five of them), each
    preset on every block (transformers: ``full``, ``full_attn``, ``core_attn``,
    ``selective``; the CNN: ``full``), and each policy of ``--policies`` on every block (a
    non-reentrant region with that policy);
  * the block plan: ``planner.plan`` with every option kind but the operator-level ``ops``
    (whole blocks, sublayers, policies per block);
  * the plan: ``planner.plan`` with every kind, ``ops`` included (``--calibrate N``: with N
    rounds of calibration).  Both plans are solved on one profile.
Memory is the host allocator's bytes held after forward and loss, less the outputs
(``FLAGS_enable_host_memory_stat``).  Times are forward + loss + backward, rounds
interleaved (each choice does round r, in rotating order, before any does r + 1); a
choice's time is the median over rounds of its step over none's step of the same round
(the load of a shared machine drifts between rounds; each step's ms are kept in the JSON).
A step's time is this process's CPU time (``--clock cpu``, the default; every thread's,
kernels included): on a shared 2-core machine at load 8 the wall clock is mostly waiting for
other processes (ten 1024x1024 matmuls: 8.6-10.2 s wall, 0.48-0.51 s CPU).  ``--clock wall``
times by the wall clock; the JSON keeps both (``ms``, ``wall_ms``).
``extra`` is a choice's time over none's as a fraction of full recompute's (``k=n``).
Losses of every choice equal none's bit for bit (asserted).  Verdicts per budget: the plan
fits it; its time against the fastest simpler choice that fits; and every choice that
holds no more memory than the plan yet ran faster (``beaten by``, by the medians; ``beyond
noise``: also in enough paired rounds for a one-sided sign test at 0.05, the planner's duel
rule).  ``--table FILE`` prints a saved run's report again (``--plot PNG`` with it: its plot).

Models: ``gpt`` (the project's GPT), each PaddleFormers causal LM family that trains on CPU
(``llama``, ...; ``<family>_large``: hidden ``--large-hidden``), ``resnet50``
(``paddle.vision.models``, 64x64 images, its 16 bottlenecks as blocks).

    python benchmarks/frontier.py [--models gpt,llama,...] [--rounds 5] [--json out.json] [--plot out.png]
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("FLAGS_enable_host_memory_stat", "1")  # before Paddle is imported
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's package

import paddle  # noqa: E402
import paddle.nn.functional as F  # noqa: E402

from paddle_recompute import apply_recompute_granularity, bench, planner, policies, recompute  # noqa: E402
from paddle_recompute.bench import FAMILIES, HostMemory, causal_lm, duel_wins, nbytes_of  # noqa: E402
from paddle_recompute.planner import route_forwards  # noqa: E402

TRANSFORMER_PRESETS = ("full", "full_attn", "core_attn", "selective")
CLOCK = ["cpu"]  # --clock: "cpu" (process CPU time) or "wall"


class Subject:
    """A model, its blocks and one training batch: ``loss(inputs)`` runs forward and loss."""

    def __init__(self, name: str, args: argparse.Namespace):
        self.name = name
        family = name.removesuffix("_large")
        hidden = args.large_hidden if name.endswith("_large") else args.hidden
        cfg = dict(vocab=args.vocab, hidden=hidden, heads=args.heads, seq=args.seq)
        self.tokens, self.targets = bench.gpt_batch(bench.GPTConfig(batch=args.batch, **cfg), 0)
        self.presets = TRANSFORMER_PRESETS
        if family == "gpt":
            paddle.seed(0)
            self.model = bench.GPT(bench.GPTConfig(blocks=args.blocks, batch=args.batch,
                                                           dropout=args.dropout, **cfg))
            self.blocks = list(self.model.blocks)
        elif family == "resnet50":
            from paddle.vision import models
            from paddle.vision.models.resnet import BottleneckBlock

            paddle.seed(0)
            self.model = models.resnet50(num_classes=10)
            self.tokens = paddle.randn([args.batch, 3, 64, 64])
            self.targets = paddle.arange(args.batch, dtype="int64") % 10
            self.blocks = [m for m in self.model.sublayers() if isinstance(m, BottleneckBlock)]
            self.presets = ("full",)
        else:
            self.model = causal_lm(family, vocab=args.vocab, hidden=hidden, heads=args.heads,
                                   kv_heads=args.kv_heads, layers=args.blocks, positions=args.seq,
                                   dropout=args.dropout)
            self.blocks = list(self.model.model.layers)

    def outputs(self, inputs):
        if self.name == "gpt":
            return bench.gpt_loss(self.model(inputs), self.targets)
        if self.name == "resnet50":
            return F.cross_entropy(self.model(inputs), self.targets)
        return self.model(input_ids=inputs, labels=self.targets)

    def loss(self, inputs) -> paddle.Tensor:
        return _loss_of(self.outputs(inputs))


def add_llama_size(parser: argparse.ArgumentParser) -> None:
    """``--hidden --seq --blocks --batch``: the Llama of ``llama_subject`` (other benchmarks)."""
    for name, default in (("hidden", 512), ("seq", 256), ("blocks", 4), ("batch", 4)):
        parser.add_argument(f"--{name}", type=int, default=default)


def llama_arguments(doc: str, count: str, default: int, more: tuple = ()) -> argparse.Namespace:
    """Arguments of a Llama benchmark (for ``llama_subject``): ``--COUNT N`` (rounds or
    steps), the Llama's size (``add_llama_size``), ``--json FILE`` and the integer options
    ``more`` (``(name, default)`` pairs); Paddle set to the CPU."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    for name, value in ((count, default), *more):
        parser.add_argument(f"--{name}", type=int, default=value)
    add_llama_size(parser)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    paddle.set_device("cpu")
    return args


def llama_subject(args: argparse.Namespace) -> Subject:
    """PaddleFormers' Llama at ``add_llama_size``'s arguments (8 heads, 4 KV heads, dropout 0.1)."""
    return Subject("llama", argparse.Namespace(
        vocab=512, hidden=args.hidden, heads=8, kv_heads=4, blocks=args.blocks, seq=args.seq,
        batch=args.batch, large_hidden=768, dropout=0.1))


def _loss_of(out) -> paddle.Tensor:
    return out if isinstance(out, paddle.Tensor) else (out["loss"] if isinstance(out, dict) else out[0])


def _layer_level(subject: Subject, k: int):
    for block in subject.blocks[:k]:
        apply_recompute_granularity(block, "full")
    return lambda: [apply_recompute_granularity(b, "none") for b in subject.blocks[:k]]


def _preset(subject: Subject, granularity: str):
    for block in subject.blocks:
        apply_recompute_granularity(block, granularity)
    return lambda: [apply_recompute_granularity(b, "none") for b in subject.blocks]


def _non_reentrant(forward, **options):
    """``forward`` as a non-reentrant recompute region with ``options``."""
    return functools.partial(recompute, forward, use_reentrant=False, **options)


def _policy(subject: Subject, policy):
    return route_forwards((b, functools.partial(_non_reentrant, policy=policy))
                          for b in subject.blocks).remove


def _held(subject: Subject, memory: HostMemory) -> tuple[int, float]:
    gc.collect()
    paddle.seed(1)
    before = memory.current()
    out = subject.outputs(subject.tokens)
    held = memory.current() - before - nbytes_of(out)
    loss = _loss_of(out)
    value = float(loss)
    loss.backward()
    subject.model.clear_gradients()
    return held, value


def _step(subject: Subject) -> tuple[float, float]:
    """(seconds, loss) of one forward + loss + backward: CPU seconds of this process (every
    thread's) with ``CLOCK`` "cpu", else wall seconds; ``_step.wall`` keeps the wall's, and
    ``_step.phases`` the CPU seconds of the forward (with the loss) and of the backward."""
    paddle.seed(1)
    start, cpu = time.perf_counter(), time.process_time()
    loss = subject.loss(subject.tokens)
    forward = time.process_time()
    loss.backward()
    _step.wall = time.perf_counter() - start
    end = time.process_time()
    _step.phases = (forward - cpu, end - forward)
    seconds = end - cpu if CLOCK[0] == "cpu" else _step.wall
    subject.model.clear_gradients()
    return seconds, float(loss)


def _ks(n: int) -> list[int]:
    return list(range(n + 1)) if n <= 8 else sorted({0, n // 4, n // 2, 3 * n // 4, n})


def _choices(subject: Subject, policy_names: list[str], ks: list[int] | None,
             presets: list[str] | None) -> dict:
    n = len(subject.blocks)
    ks = sorted({0, n, *(k for k in (ks or _ks(n)) if k <= n)})  # none and full: the scale
    choices = {f"k={k}": (lambda k=k: _layer_level(subject, k)) for k in ks}
    choices.update({p: (lambda p=p: _preset(subject, p)) for p in subject.presets
                    if presets is None or p in presets})
    choices.update({f"policy {p}": (lambda p=p: _policy(subject, getattr(policies, p)))
                    for p in policy_names})
    return choices


def _plans(subject: Subject, budgets: list[float], none_held: int, calibrate: int,
           final_rounds: int) -> dict:
    without_ops = [k for k in planner.option_kinds() if k != "ops"]
    plans, prof = {}, None
    for b in budgets:
        limit = int(b * none_held)
        for label, kinds in ((f"block plan {b:g}", without_ops), (f"plan {b:g}", None)):
            try:
                p = planner.plan(subject.loss, subject.tokens, budget=limit, blocks=subject.blocks,
                                 calibrate=calibrate, profile=prof, options=kinds,
                                 final_rounds=final_rounds)
            except planner.InfeasibleBudget as exc:  # said in the report, not a crash
                print(f"{subject.name}: {label}: {exc}")
                continue
            prof = p.profile
            plans[label] = p
    return plans


def measure(subject: Subject, budgets: list[float], rounds: int, calibrate: int,
            policy_names: list[str], ks: list[int] | None = None,
            presets: list[str] | None = None, final_rounds: int = 3) -> dict:
    memory = HostMemory()
    if not memory.enabled():
        raise SystemExit("frontier: FLAGS_enable_host_memory_stat=1 must be set before Paddle is imported")
    _held(subject, memory)  # first call: caches a model keeps (rotary tables) are made
    none_held, none_loss = _held(subject, memory)
    choices = _choices(subject, policy_names, ks, presets)
    started = time.perf_counter()
    plans = _plans(subject, budgets, none_held, calibrate, final_rounds)
    planning_s = time.perf_counter() - started
    choices.update({label: (lambda p=p: planner.apply_plan(None, p).remove) for label, p in plans.items()})
    held, times, walls = {}, {name: [] for name in choices}, {name: [] for name in choices}
    for name, apply in choices.items():
        undo = apply()
        held[name], loss = _held(subject, memory)
        undo()
        assert loss == none_loss, (subject.name, name, loss, none_loss)
    names = list(choices)
    for r in range(rounds + 1):  # round 0 warms up
        for name in names[r % len(names):] + names[:r % len(names)]:
            undo = choices[name]()
            seconds, loss = _step(subject)
            undo()
            assert loss == none_loss, (subject.name, name, loss, none_loss)
            if r:
                times[name].append(seconds)
                walls[name].append(_step.wall)
    base = statistics.median(times["k=0"])
    ratio = {n: statistics.median(t / b for t, b in zip(times[n], times["k=0"], strict=True))
             for n in names}  # paired with none's step of the same round: drift cancels
    full = ratio[f"k={len(subject.blocks)}"] - 1
    rows = {n: {"held": held[n], "memory": held[n] / none_held, "time": ratio[n],
                "extra": (ratio[n] - 1) / full if full > 0 else float("nan"),
                "ms": [1e3 * t for t in times[n]], "wall_ms": [1e3 * t for t in walls[n]]}
            for n in names}
    return {"none_held": none_held, "none_ms": 1e3 * base, "planning_s": planning_s,
            "full_extra_ms": 1e3 * full * base, "rows": rows,
            "plans": {label: [c.option for c in p.choices] for label, p in plans.items()},
            "verdicts": [_verdict(rows, b) for b in budgets if f"plan {b:g}" in rows]}


def _verdict(rows: dict, budget: float) -> dict:
    simple = {n: r for n, r in rows.items() if not n.startswith(("plan", "block plan"))}
    fits = {n: r for n, r in simple.items() if r["memory"] <= budget}
    best = min(fits, key=lambda n: fits[n]["time"]) if fits else None
    plan = rows[f"plan {budget:g}"]
    rivals = [n for n, r in rows.items() if n != f"plan {budget:g}" and r["memory"] <= plan["memory"]]
    beaten_by = sorted(n for n in rivals if rows[n]["time"] < plan["time"])
    wins = {n: sum(r < p for r, p in zip(rows[n]["ms"], plan["ms"], strict=True)) for n in beaten_by}
    return {"budget": budget, "plan_fits": plan["memory"] <= budget, "plan_memory": plan["memory"],
            "plan_time": plan["time"], "plan_extra": plan["extra"],
            "block_plan_extra": rows.get(f"block plan {budget:g}", {"extra": float("nan")})["extra"],
            "best_simple": best, "best_time": fits[best]["time"] if best else None,
            "plan_vs_best": plan["time"] / fits[best]["time"] if best else None,
            "beaten_by": beaten_by, "rounds_won": wins, "rounds": len(plan["ms"]),
            # faster in enough paired rounds (the same round's steps) for a one-sided sign test
            # at 0.05 to reject "equally fast": the planner's own duel rule (NOTE [ Final
            # measurement ]); a median ahead by less than the rounds' spread is not a slower
            # plan.  Needs at least 5 rounds (4 of 4 is p = 0.0625)
            "beaten_beyond_noise_by": sorted(n for n in beaten_by if wins[n] >= duel_wins(len(plan["ms"])))}


def report(name: str, result: dict) -> None:
    print(f"\n## {name}: none holds {result['none_held'] / 2**20:.2f} MiB, step {result['none_ms']:.0f} ms, "
          f"full recompute +{result['full_extra_ms']:.0f} ms; planning (every budget) "
          f"{result['planning_s']:.0f} s")
    print("| choice | memory vs none | time vs none | extra / full's |\n|---|---:|---:|---:|")
    for n, r in result["rows"].items():
        print(f"| {n} | {r['memory']:.3f}x | {r['time']:.3f}x | {r['extra']:.2f} |")
    for v in result["verdicts"]:
        chosen = result["plans"][f"plan {v['budget']:g}"]
        best = (f"fastest simpler choice that fits: {v['best_simple']} at {v['best_time']:.3f}x; "
                f"plan/best {v['plan_vs_best']:.3f}" if v["best_simple"] else "no simpler choice fits")
        print(f"budget {v['budget']:g}: plan {'fits' if v['plan_fits'] else 'DOES NOT FIT'} "
              f"({v['plan_memory']:.3f}x) at {v['plan_time']:.3f}x, extra {v['plan_extra']:.2f} of full's "
              f"(block plan {v['block_plan_extra']:.2f}); {best}; beaten by: {_beaten(v)} "
              f"(beyond noise: {v['beaten_beyond_noise_by'] or 'none'}) {chosen}")


def _beaten(verdict: dict) -> str:
    return ", ".join(f"{n} ({verdict['rounds_won'][n]} of {verdict['rounds']} rounds)"
                     for n in verdict["beaten_by"]) or "none"


def print_saved(path: str, png: str | None = None) -> None:
    """The report of a saved ``--json`` run, its verdicts recomputed from the rows (and its
    plot into ``png``)."""
    saved = json.loads(Path(path).read_text())
    budgets = [float(b) for b in saved["args"]["budgets"].split(",")]
    for name, result in saved["results"].items():
        result["verdicts"] = [_verdict(result["rows"], b) for b in budgets if f"plan {b:g}" in result["rows"]]
        report(name, result)
    if png:
        plot(png, saved["results"])


def plot(path: str, results: dict) -> None:
    from paddle_recompute.bench import require_matplotlib

    fig = require_matplotlib()(figsize=(6 * len(results), 5))
    axes = fig.subplots(1, len(results), squeeze=False)[0]
    for ax, (name, result) in zip(axes, results.items(), strict=True):
        rows = result["rows"]
        for prefix, style in (("plan ", "o-"), ("block plan ", "s--")):
            pts = sorted((r["memory"], r["extra"]) for n, r in rows.items() if n.startswith(prefix))
            ax.plot([m for m, _ in pts], [e for _, e in pts], style, label=prefix.strip())
        for n, r in rows.items():
            if not n.startswith(("plan", "block plan")):
                ax.plot([r["memory"]], [r["extra"]], "x", color="grey")
                ax.annotate(n, (r["memory"], r["extra"]), fontsize=6)
        ax.set(xlabel="activation memory vs none", ylabel="extra time / full recompute's", title=name)
        ax.set_xlim(left=0)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=",".join(["gpt", *FAMILIES]))
    parser.add_argument("--budgets", default="0.75,0.5,0.25")
    for name, default in (("vocab", 512), ("hidden", 128), ("heads", 4), ("kv_heads", 2), ("blocks", 4),
                          ("seq", 128), ("batch", 4), ("large_hidden", 768)):
        parser.add_argument(f"--{name.replace('_', '-')}", dest=name, type=int, default=default)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calibrate", type=int, default=0)
    parser.add_argument("--final-rounds", type=int, default=3,
                        help="plan(final_rounds=...): rounds measuring the best plans that fit")
    parser.add_argument("--policies", default="", help="comma-separated names in paddle_recompute.policies")
    parser.add_argument("--ks", default=None, help="layer-level choices k (default: all up to 8 blocks)")
    parser.add_argument("--presets", default=None, help="comma-separated presets (default: all that apply)")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="time steps by this process's CPU time (default: a shared machine's "
                             "wall clock is mostly waiting) or by the wall clock")
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("--plot", metavar="PNG")
    parser.add_argument("--table", metavar="FILE", help="print the tables and verdicts of a saved --json run")
    args = parser.parse_args()
    if args.table:  # with --plot: the saved run's plot too
        return print_saved(args.table, args.plot)
    CLOCK[0] = args.clock
    paddle.set_device("cpu")
    budgets = [float(b) for b in args.budgets.split(",")]
    policy_names = [p for p in args.policies.split(",") if p]
    ks = [int(k) for k in args.ks.split(",")] if args.ks else None
    presets = args.presets.split(",") if args.presets else None
    results = {}
    for name in args.models.split(","):
        results[name] = measure(Subject(name, args), budgets, args.rounds, args.calibrate, policy_names,
                                ks, presets, args.final_rounds)
        report(name, results[name])
        if args.json:  # after each model: a long run keeps what it measured
            Path(args.json).write_text(json.dumps({"args": vars(args), "results": results}, indent=1))
        if args.plot:
            plot(args.plot, results)


if __name__ == "__main__":
    main()
