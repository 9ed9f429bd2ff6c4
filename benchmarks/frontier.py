"""Is the plan on the frontier?  The planner against every simpler choice, per budget.

For the project's GPT and each PaddleFormers causal LM that trains on CPU, and for each
budget (fractions of the activation memory no recompute holds after the forward):
  * simpler choices: uniform layer-level recompute of the first ``k`` of ``n`` blocks
    (``k=0`` is none, ``k=n`` full), and each preset (``full``, ``full_attn``,
    ``core_attn``, ``selective``) on every block;
  * the plan: ``planner.plan(step, batch, budget=<that many bytes>)`` applied
    (``--calibrate N``: with N rounds of calibration).
Memory is the host allocator's bytes held after forward and loss, less the outputs
(``FLAGS_enable_host_memory_stat``).  Times are forward + loss + backward, rounds
interleaved (each choice does round r, in rotating order, before any does r + 1), medians.
Losses of every choice equal none's bit for bit (asserted).  The verdict for a budget: the
plan fits it, and its time against the fastest simpler choice that fits it too.

    python benchmarks/frontier.py [--models gpt,llama,...] [--rounds 5] [--json out.json]
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

import paddle  # noqa: E402

from paddle_recompute import apply_recompute_granularity, planner  # noqa: E402
from paddle_recompute._bench import gpt as gpt_model  # noqa: E402
from paddle_recompute._bench.memory import HostMemory  # noqa: E402
from paddle_recompute._bench.paddleformers import FAMILIES, causal_lm  # noqa: E402
from paddle_recompute._planner.profile import nbytes_of  # noqa: E402

PRESETS = ("full", "full_attn", "core_attn", "selective")


class Subject:
    """A model, its blocks and one training batch: ``loss(tokens)`` runs forward and loss."""

    def __init__(self, name: str, args: argparse.Namespace):
        self.name = name
        cfg = dict(vocab=args.vocab, hidden=args.hidden, heads=args.heads, seq=args.seq)
        self.tokens, self.targets = gpt_model.gpt_batch(gpt_model.GPTConfig(batch=args.batch, **cfg), 0)
        if name == "gpt":
            paddle.seed(0)
            self.model = gpt_model.GPT(gpt_model.GPTConfig(blocks=args.blocks, batch=args.batch,
                                                           dropout=args.dropout, **cfg))
            self.blocks = list(self.model.blocks)
        else:
            self.model = causal_lm(name, vocab=args.vocab, hidden=args.hidden, heads=args.heads,
                                   kv_heads=args.kv_heads, layers=args.blocks, positions=args.seq,
                                   dropout=args.dropout)
            self.blocks = list(self.model.model.layers)

    def outputs(self, tokens):
        if self.name == "gpt":
            return gpt_model.gpt_loss(self.model(tokens), self.targets)
        return self.model(input_ids=tokens, labels=self.targets)

    def loss(self, tokens) -> paddle.Tensor:
        out = self.outputs(tokens)
        return out if isinstance(out, paddle.Tensor) else (out["loss"] if isinstance(out, dict) else out[0])


def _layer_level(subject: Subject, k: int):
    for block in subject.blocks[:k]:
        apply_recompute_granularity(block, "full")
    return lambda: [apply_recompute_granularity(b, "none") for b in subject.blocks[:k]]


def _preset(subject: Subject, granularity: str):
    for block in subject.blocks:
        apply_recompute_granularity(block, granularity)
    return lambda: [apply_recompute_granularity(b, "none") for b in subject.blocks]


def _held(subject: Subject, memory: HostMemory) -> tuple[int, float]:
    gc.collect()
    paddle.seed(1)
    before = memory.current()
    out = subject.outputs(subject.tokens)
    held = memory.current() - before - nbytes_of(out)
    loss = out if isinstance(out, paddle.Tensor) else (out["loss"] if isinstance(out, dict) else out[0])
    value = float(loss)
    loss.backward()
    subject.model.clear_gradients()
    return held, value


def _step(subject: Subject) -> tuple[float, float]:
    paddle.seed(1)
    start = time.perf_counter()
    loss = subject.loss(subject.tokens)
    loss.backward()
    seconds = time.perf_counter() - start
    subject.model.clear_gradients()
    return seconds, float(loss)


def measure(subject: Subject, budgets: list[float], rounds: int, calibrate: int) -> dict:
    memory = HostMemory()
    if not memory.enabled():
        raise SystemExit("frontier: FLAGS_enable_host_memory_stat=1 must be set before Paddle is imported")
    _held(subject, memory)  # first call: caches a model keeps (rotary tables) are made
    none_held, none_loss = _held(subject, memory)
    choices = {f"k={k}": (lambda k=k: _layer_level(subject, k)) for k in range(len(subject.blocks) + 1)}
    choices.update({p: (lambda p=p: _preset(subject, p)) for p in PRESETS})
    plans = {}
    for b in budgets:
        plans[b] = planner.plan(subject.loss, subject.tokens, budget=int(b * none_held),
                                blocks=subject.blocks, calibrate=calibrate)
        choices[f"plan {b:g}"] = lambda p=plans[b]: planner.apply_plan(None, p).remove
    held, times = {}, {name: [] for name in choices}
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
    base = statistics.median(times["k=0"])
    rows = {n: {"held": held[n], "memory": held[n] / none_held,
                "time": statistics.median(times[n]) / base} for n in names}
    return {"none_held": none_held, "none_ms": 1e3 * base, "rows": rows,
            "plans": {f"{b:g}": [c.option for c in plans[b].choices] for b in budgets},
            "verdicts": [_verdict(rows, b) for b in budgets]}


def _verdict(rows: dict, budget: float) -> dict:
    fits = {n: r for n, r in rows.items() if r["memory"] <= budget and not n.startswith("plan")}
    best = min(fits, key=lambda n: fits[n]["time"])
    plan = rows[f"plan {budget:g}"]
    return {"budget": budget, "plan_fits": plan["memory"] <= budget, "plan_memory": plan["memory"],
            "plan_time": plan["time"], "best_simple": best, "best_time": fits[best]["time"],
            "plan_vs_best": plan["time"] / fits[best]["time"]}


def report(name: str, result: dict) -> None:
    print(f"\n## {name}: none holds {result['none_held'] / 2**20:.2f} MiB, step {result['none_ms']:.0f} ms")
    print("| choice | memory vs none | time vs none |\n|---|---:|---:|")
    for n, r in result["rows"].items():
        print(f"| {n} | {r['memory']:.3f}x | {r['time']:.3f}x |")
    for v in result["verdicts"]:
        print(f"budget {v['budget']:g}: plan {'fits' if v['plan_fits'] else 'DOES NOT FIT'} "
              f"({v['plan_memory']:.3f}x) at {v['plan_time']:.3f}x; fastest simpler choice that fits: "
              f"{v['best_simple']} at {v['best_time']:.3f}x; plan/best {v['plan_vs_best']:.3f} "
              f"{result['plans'][format(v['budget'], 'g')]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=",".join(["gpt", *FAMILIES]))
    parser.add_argument("--budgets", default="0.75,0.5,0.25")
    for name, default in (("vocab", 512), ("hidden", 128), ("heads", 4), ("kv_heads", 2), ("blocks", 4),
                          ("seq", 128), ("batch", 4)):
        parser.add_argument(f"--{name}", type=int, default=default)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calibrate", type=int, default=0)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    paddle.set_device("cpu")
    budgets = [float(b) for b in args.budgets.split(",")]
    results = {}
    for name in args.models.split(","):
        results[name] = measure(Subject(name, args), budgets, args.rounds, args.calibrate)
        report(name, results[name])
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "results": results}, indent=1))


if __name__ == "__main__":
    main()
