"""Memory against time on a GPT-style stack: layer-level recompute, the planner, selective policies.

Modes, one model each with identical initial weights:
  * ``k=0..8``: recompute the first k of the 8 blocks whole (non-reentrant): the layer-level
    line; ``k=0`` is "none".
  * ``plan 50%`` / ``plan 25%``: :func:`paddle_recompute.planner.plan` with that fraction of none's
    forward activation memory (the planner budgets what is saved for backward; the bytes the
    forward holds besides, its logits, are measured on none and taken off the budget), with
    ``--calibrate`` rounds of calibration (option times measured as step growth).
  * every block under ``save_matmuls``, under ``except_scores+masks``
    (``save_matmuls_except_scores_and_masks``), the
    ``core_attn`` / ``full_attn`` presets (``apply_recompute_granularity``), and the
    planner with four more per-block options: the built-in ``policy:selective`` and
    ``policy:masks``, whose bytes and rerun time ``plan`` measures itself, and two
    registered here, ``policy:save_matmuls`` (the block) and ``policy:core_attn`` (its
    attention layer, ``save_all_but_attention_core``), whose held bytes are measured with
    the host allocator and whose time is the recompute time less the forward time of the
    Linear layers the policy keeps.
Rounds are interleaved (each mode does step r, in rotating order, before any does r + 1);
medians over the rounds after the warm-up.  Losses must equal none's bit for bit (asserted).

    python benchmarks/memory_time.py [--rounds 3] [--calibrate 0] [--json out.json] [--plot out.png]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
from pathlib import Path

os.environ.setdefault("FLAGS_enable_host_memory_stat", "1")  # before Paddle is imported
_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(_ROOT))  # this checkout's package

import paddle.nn.functional as F  # noqa: E402

import paddle_recompute as pr  # noqa: E402
from paddle_recompute import policies  # noqa: E402
from paddle_recompute.bench import GPTConfig, MiB  # noqa: E402
from paddle_recompute.bench import harness as gpt_model  # noqa: E402

TARGETS = {"plan 50%": (0.50, 1.06), "plan 25%": (0.25, 1.12), "save_matmuls": (0.50, 1.06),
           "except_scores+masks": (0.50, 1.06),
           "core_attn": (0.50, 1.06), "plan+policies 50%": (0.50, 1.06),
           "plan+policies 25%": (0.25, 1.12)}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    defaults = GPTConfig()
    for name in ("blocks", "hidden", "heads", "seq", "batch", "vocab"):
        parser.add_argument(f"--{name}", type=int, default=getattr(defaults, name))
    parser.add_argument("--dropout", type=float, default=defaults.dropout)
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds after one warm-up round")
    parser.add_argument("--warm", action="store_true",
                        help="each mode runs an untimed step right before its timed one (see "
                             "paddle_recompute/_bench/rounds.py: interleaving flatters recompute)")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    parser.add_argument("--plot", metavar="FILE", help="write the memory/time plot (PNG)")
    parser.add_argument("--calibrate", type=int, default=0,
                        help="planner calibration rounds (0: plan on rerun times alone)")
    return parser.parse_args()


def _first_k(k: int):
    def runner(block, x):
        return pr.recompute(block, x, use_reentrant=False) if block._bench_index < k else block(x)

    return runner


def _policy_runner(policy):
    return lambda block, x: pr.recompute(block, x, use_reentrant=False, policy=policy)


def _build(cfg, runner):
    model, opt = gpt_model.build(cfg, "none", seed=0)
    for i, block in enumerate(model.blocks):
        block._bench_index = i
    model.runner = runner
    return model, opt


def _loss_of(model, cfg):
    def loss(tokens, targets):
        logits = model(tokens)
        return F.cross_entropy(logits.reshape([-1, cfg.vocab]), targets.reshape([-1]))

    return loss


def build_modes(cfg: GPTConfig, calibrate: int) -> tuple[dict, dict]:
    """Model and optimizer per mode, and the plans made."""
    modes = {f"k={k}": _build(cfg, _first_k(k)) for k in range(cfg.blocks + 1)}
    none_bytes = gpt_model.train_step(*_build(cfg, _first_k(0)), cfg, 0).forward_bytes
    plans = {}
    variants = [("plan", ("keep", "full", "sub")),  # before the policy kinds are registered
                ("plan+policies", _register_policy_options(cfg))]
    for prefix, kinds in variants:
        prof = None
        for frac in (0.5, 0.25):
            label = f"{prefix} {int(100 * frac)}%"
            model, opt = _build(cfg, _first_k(0))
            tokens, targets = gpt_model.synthetic_batch(cfg, 0)
            call = _loss_of(model, cfg)
            if prof is None:  # one profile (and calibration) per variant, shared by budgets
                prof = pr.planner.profile(call, tokens, targets, blocks=list(model.blocks))
            held_besides = none_bytes - prof.total_bytes  # logits etc.: not saved for backward
            plan = pr.planner.plan(call, tokens, targets, blocks=list(model.blocks), profile=prof,
                           budget=int(frac * none_bytes - held_besides), options=kinds,
                           calibrate=calibrate)
            plan.apply(model)
            modes[label] = (model, opt)
            plans[label] = plan
            print(f"{label}:\n{plan}\n", file=sys.stderr)
    modes["save_matmuls"] = _build(cfg, _policy_runner(policies.save_matmuls))
    modes["except_scores+masks"] = _build(cfg, _policy_runner(policies.save_matmuls_except_scores_and_masks))
    for granularity in ("core_attn", "full_attn"):
        model, opt = _build(cfg, _first_k(0))
        for block in model.blocks:
            pr.apply_recompute_granularity(block, granularity)
        modes[granularity] = (model, opt)
    return modes, plans


def _held_by(block, wrap_target, wrap, x) -> int:
    """Bytes a block holds for backward with ``wrap`` on ``wrap_target`` (host allocator)."""
    previous = wrap_target.__dict__.get("forward")
    wrap_target.forward = wrap(wrap_target.forward)
    try:
        gc.collect()  # garbage of earlier models freed during the call would read as negative bytes
        before = gpt_model.allocated()
        out = block(x)
        return gpt_model.allocated() - before - out.size * out.element_size()
    finally:
        if previous is None:
            del wrap_target.forward
        else:
            wrap_target.forward = previous


def _register_policy_options(cfg) -> tuple:
    """Register the two policy option kinds (costs measured on one sample block)."""
    import paddle

    def region(policy):
        return lambda f: (lambda *a, **k: pr.recompute(f, *a, use_reentrant=False,
                                                       policy=policy, **k))

    sample, _ = gpt_model.build(cfg, "none", seed=0)
    x = paddle.randn([cfg.batch, cfg.seq, cfg.hidden])
    x.stop_gradient = False
    block = sample.blocks[0]
    save_matmuls = region(policies.save_matmuls)
    core = region(policies.save_all_but_attention_core)
    # x exists before the measurement, but in the model a block's input is fresh and held
    # (by the region, or by the first layer norm): count it, as the profile does
    x_bytes = x.size * x.element_size()
    held = {"policy:save_matmuls": _held_by(block, block, save_matmuls, x) + x_bytes,
            "policy:core_attn": _held_by(block, block.attn, core, x) + x_bytes}

    def linear_time(row, prof, under):
        return sum(prof.layers[n].forward_s for n in prof.layers
                   if n.startswith(under + ".") and prof.layers[n].type == "Linear")

    def matmuls(row, prof):
        t = max(row.recompute_s - linear_time(row, prof, row.name), 0.0)
        return [("policy:save_matmuls", held["policy:save_matmuls"], t, (row.name,))]

    def core_attn(row, prof):
        attn = prof.layers[row.name + ".attn"]
        t = max(attn.recompute_s - linear_time(attn, prof, attn.name), 0.0)
        return [("policy:core_attn", held["policy:core_attn"], t, (attn.name,))]

    pr.planner.register_option("policy:save_matmuls", matmuls, save_matmuls)
    pr.planner.register_option("policy:core_attn", core_attn, core)
    # built in, costs measured by plan itself: policy:selective, policy:masks
    return ("keep", "full", "sub", "policy:save_matmuls", "policy:core_attn",
            "policy:selective", "policy:masks")


def run_rounds(cfg: GPTConfig, modes: dict, rounds: int, warm: bool = False) -> dict:
    names = list(modes)
    stats: dict = {m: [] for m in names}
    stride = 2 if warm else 1
    for step in range(1 + rounds):
        for m in names[step % len(names):] + names[:step % len(names)]:
            if warm:
                gpt_model.train_step(*modes[m], cfg, stride * step, seed=0)
            stats[m].append(gpt_model.train_step(*modes[m], cfg, stride * step + stride - 1, seed=0))
        print(f"  round {step} done" + (" (warm-up)" if step == 0 else ""), file=sys.stderr)
    return stats


def summarize(stats: dict) -> dict:
    base = stats["k=0"]
    losses = [s.loss for s in base]
    rows = {}
    for m, steps in stats.items():
        assert [s.loss for s in steps] == losses, f"{m}: losses differ from no recompute"
        timed = steps[1:]
        rows[m] = {"step_ms": 1e3 * statistics.median(s.seconds for s in timed),
                   "best_ms": 1e3 * min(s.seconds for s in timed),
                   "step_ms_all": [1e3 * s.seconds for s in timed],
                   "forward_mib": statistics.median(s.forward_bytes for s in timed) / MiB,
                   "peak_mib": statistics.median(s.peak_bytes for s in timed) / MiB}
    for row in rows.values():
        row["time_x"] = row["step_ms"] / rows["k=0"]["step_ms"]
        row["best_time_x"] = row["best_ms"] / rows["k=0"]["best_ms"]
        row["memory_x"] = row["forward_mib"] / rows["k=0"]["forward_mib"]
    return rows


def _below_line(rows: dict, blocks: int, m: str, key: str = "time_x") -> bool:
    """Is mode ``m`` below the straight line through k=0 and k=all (memory at its time)?

    Memory and time both grow linearly in k in this model, so the layer-level choices lie
    on that line up to timing noise.
    """
    (t0, m0), (t1, m1) = ((rows[f"k={k}"][key], rows[f"k={k}"]["memory_x"]) for k in (0, blocks))
    t = rows[m][key]
    return rows[m]["memory_x"] < m0 + (m1 - m0) * (t - t0) / (t1 - t0) if t1 != t0 else False


def report(rows: dict, blocks: int) -> None:
    print("| mode | step ms (median) | time vs none | best ms | best vs none | "
          "fwd activations MiB | memory vs none | below k-line | target (medians) |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---|")
    for m, row in rows.items():
        target = ""
        if m in TARGETS:
            mem, tim = TARGETS[m]
            ok = row["memory_x"] <= mem and row["time_x"] <= tim
            target = f"<= {mem:.2f}x mem, <= {tim:.2f}x time: {'met' if ok else 'NOT met'}"
        below = "" if m.startswith("k=") else "/".join(
            "yes" if _below_line(rows, blocks, m, key) else "no" for key in ("time_x", "best_time_x"))
        print(f"| {m} | {row['step_ms']:.0f} | {row['time_x']:.3f}x | {row['best_ms']:.0f} | "
              f"{row['best_time_x']:.3f}x | {row['forward_mib']:.1f} | {row['memory_x']:.3f}x | "
              f"{below} | {target} |")


def plot(rows: dict, blocks: int, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 5))
    line = [rows[f"k={k}"] for k in range(blocks + 1)]
    ax.plot([r["time_x"] for r in line], [r["memory_x"] for r in line], "o-", color="grey",
            label=f"recompute k of {blocks} blocks (layer level)")
    ends = [line[0], line[-1]]
    ax.plot([r["time_x"] for r in ends], [r["memory_x"] for r in ends], "--", color="grey",
            linewidth=0.8, label=f"line through k=0 and k={blocks}")
    for k, r in enumerate(line):
        ax.annotate(f"k={k}", (r["time_x"], r["memory_x"]), fontsize=7, xytext=(4, 2),
                    textcoords="offset points")
    for m, row in rows.items():
        if not m.startswith("k="):
            marker = "*" if m.startswith("plan") else "D"
            ax.plot(row["time_x"], row["memory_x"], marker, markersize=10, label=m)
    ax.set_xlabel("step time / none")
    ax.set_ylabel("forward activation memory / none")
    ax.set_title("GPT-style stack on CPU: memory vs time (medians)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    args = parse_args()
    cfg = GPTConfig(vocab=args.vocab, hidden=args.hidden, heads=args.heads, blocks=args.blocks,
                    seq=args.seq, batch=args.batch, dropout=args.dropout)
    if not gpt_model.memory_stats_enabled():
        raise SystemExit("host memory statistics are off: run with FLAGS_enable_host_memory_stat=1")
    print(f"GPT on CPU: {cfg}; 1 warm-up + {args.rounds} interleaved rounds, medians\n")
    modes, plans = build_modes(cfg, args.calibrate)
    rows = summarize(run_rounds(cfg, modes, args.rounds, args.warm))
    report(rows, cfg.blocks)
    print("\nfwd activations: host memory held after forward + loss, minus before. "
          "Losses equal none's bit for bit in every mode (asserted).\n"
          "below k-line: below the straight line through k=0 and k=all, by median / best time.")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"config": vars(cfg), "rounds": args.rounds, "warm": args.warm, "modes": rows,
                       "plans": {k: p.to_dict() for k, p in plans.items()}}, fh, indent=2)
        print(f"wrote {args.json}")
    if args.plot:
        plot(rows, cfg.blocks, args.plot)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
