"""Python overhead of recompute per call: tiny blocks, so the framework cost dominates.

200 ``Linear(8, 8)`` blocks are applied in sequence to a ``[4, 8]`` input that requires
grad, then ``sum().backward()``.  Modes: the plain block, Paddle's built-in recompute
(``use_reentrant`` True / False) and ours (True / False), default options (RNG state
preserved).  Rounds are interleaved (every mode once per round, rotating the order) and
medians taken, so the ratios hold on a noisy machine.

    python benchmarks/overhead.py [--rounds 30] [--json out.json] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import pstats
import statistics
import time

import paddle

from paddle_recompute.bench import MODES as BENCH_MODES

# the benchmark modes' runners, ``call(block, x)`` (these modes ignore the model)
MODES = {("plain" if name == "none" else name): BENCH_MODES[name].prepare(None, None)
         for name in ("none", "builtin reentrant", "builtin non-reentrant", "ours reentrant",
                      "ours non-reentrant")}
BUILTIN_OF = {"ours reentrant": "builtin reentrant", "ours non-reentrant": "builtin non-reentrant"}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--blocks", type=int, default=200, help="Linear(8, 8) blocks per pass")
    parser.add_argument("--rounds", type=int, default=30, help="interleaved timed rounds")
    parser.add_argument("--warmup", type=int, default=3, help="untimed rounds first")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    parser.add_argument("--profile", action="store_true", help="cProfile ours (both modes) too")
    parser.add_argument("--top", type=int, default=25, help="functions listed per profile")
    return parser.parse_args()


def make_setup(n_blocks: int):
    """The blocks and the input (requiring grad), seeded."""
    paddle.seed(0)
    blocks = paddle.nn.LayerList([paddle.nn.Linear(8, 8) for _ in range(n_blocks)])
    x = paddle.randn([4, 8])
    x.stop_gradient = False
    return blocks, x


def one_pass(blocks, x, call) -> None:
    """Forward through every block via ``call``, then backward."""
    h = x
    for block in blocks:
        h = call(block, h)
    h.sum().backward()


def time_pass(blocks, x, call) -> float:
    """Seconds per block call of one forward+backward pass; gradients cleared afterwards."""
    gc.collect()
    start = time.perf_counter()
    one_pass(blocks, x, call)
    elapsed = time.perf_counter() - start
    blocks.clear_gradients()
    x.clear_gradient()
    return elapsed / len(blocks)


def measure(blocks, x, rounds: int, warmup: int) -> dict:
    """Median µs per call of each mode over interleaved rounds; an error string if it fails."""
    names = list(MODES)
    samples: dict = {name: [] for name in names}
    failed: dict = {}
    for r in range(warmup + rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            if name in failed:
                continue
            try:
                seconds = time_pass(blocks, x, MODES[name])
            except Exception as exc:  # report the built-in misbehaving, keep going
                failed[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:80]}"
                continue
            if r >= warmup:
                samples[name].append(seconds * 1e6)
    return {name: failed.get(name) or statistics.median(samples[name]) for name in names}


def summarize(medians: dict) -> dict:
    """Per mode: µs per call, overhead over plain, and ours' overhead / the built-in's."""
    plain = medians["plain"]
    rows = {}
    for name, us in medians.items():
        if isinstance(us, str):
            rows[name] = {"error": us}
            continue
        row = {"us_per_call": us, "overhead_us": us - plain}
        builtin = medians.get(BUILTIN_OF.get(name))
        if isinstance(builtin, float) and builtin > plain:
            row["overhead_vs_builtin"] = (us - plain) / (builtin - plain)
        rows[name] = row
    return rows


def print_table(rows: dict) -> None:
    """Markdown table of :func:`summarize`'s rows."""
    print("| mode | µs / call (fwd+bwd) | overhead µs / call | overhead vs built-in |")
    print("|---|---:|---:|---:|")
    for name, row in rows.items():
        if "error" in row:
            print(f"| {name} | failed: {row['error']} | | |")
            continue
        ratio = row.get("overhead_vs_builtin")
        ratio_text = f"{ratio:.2f}x" if ratio is not None else ""
        print(f"| {name} | {row['us_per_call']:.1f} | {row['overhead_us']:.1f} | {ratio_text} |")


def profile(blocks, x, name: str, passes: int, top: int) -> None:
    """cProfile ``passes`` passes of mode ``name``: time by origin, then the ``top`` functions by
    tottime, in µs per block call."""
    call = MODES[name]
    for _ in range(3):
        one_pass(blocks, x, call)
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(passes):
        one_pass(blocks, x, call)
    profiler.disable()
    blocks.clear_gradients()
    x.clear_gradient()
    calls = passes * len(blocks)
    stats = pstats.Stats(profiler).stats
    print(f"\n### cProfile: {name} ({calls} block calls; µs per block call, profiler overhead included)\n")
    print(", ".join(f"{origin}: {1e6 * t / calls:.1f}" for origin, t in by_origin(stats).items()) + "\n")
    if not top:
        return
    print("| tottime µs/call | cumtime µs/call | ncalls/call | function |")
    print("|---:|---:|---:|---|")
    for (path, line, func), (_, ncalls, tottime, cumtime, _) in _top(stats, top):
        print(f"| {1e6 * tottime / calls:.2f} | {1e6 * cumtime / calls:.2f} | {ncalls / calls:.2f} | "
              f"`{_short(path)}:{line}({func})` |")


def _top(stats: dict, n: int) -> list:
    return sorted(stats.items(), key=lambda kv: kv[1][2], reverse=True)[:n]


def _short(path: str) -> str:
    return path.split("site-packages/")[-1].split("/work/main/")[-1]


def by_origin(stats: dict) -> dict:
    """Total tottime split into ours, Paddle's Python, C built-ins (Paddle ops included), other."""
    totals = {"total": 0.0, "paddle_recompute": 0.0, "paddle (Python)": 0.0, "C built-ins": 0.0,
              "other": 0.0}
    for (path, _, _), (_, _, tottime, _, _) in stats.items():
        short = _short(path)
        origin = ("paddle_recompute" if short.startswith("paddle_recompute/")
                  else "paddle (Python)" if short.startswith("paddle/")
                  else "C built-ins" if path == "~" else "other")
        totals[origin] += tottime
        totals["total"] += tottime
    return totals


def main() -> None:
    args = parse_args()
    blocks, x = make_setup(args.blocks)
    print(f"{args.blocks} x Linear(8, 8) on a [4, 8] input (requires grad); {args.rounds} interleaved "
          f"rounds after {args.warmup} warm-up; medians. paddle {paddle.__version__}\n")
    rows = summarize(measure(blocks, x, args.rounds, args.warmup))
    print_table(rows)
    print("\noverhead = mode - plain per call; 'vs built-in' = ours' overhead / the built-in's "
          "overhead with the same use_reentrant.")
    if args.profile:
        profile(blocks, x, "plain", passes=20, top=0)  # baseline split, no table
        for name in BUILTIN_OF:
            profile(blocks, x, name, passes=20, top=args.top)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"blocks": args.blocks, "rounds": args.rounds, "modes": rows}, fh, indent=2)
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
