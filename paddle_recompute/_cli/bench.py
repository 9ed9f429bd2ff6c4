"""``paddle-recompute bench``: time and memory of every recompute mode on a benchmark model."""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any

from ._env import ensure_host_memory_stats, use_device
from ._errors import CLIError
from ._progress import progress_bar

NAME = "bench"
HELP = "compare step time, activation memory and peak memory of the recompute modes"
DESCRIPTION = """\
Trains one model per mode from the same initial weights, in interleaved rounds (every mode
does round r, in rotating order, before any does r + 1), and prints medians over the rounds
after warm-up with ratios to no recompute ("none") and to Paddle's built-in reentrant
recompute. Memory comes from Paddle's host allocator on CPU and the device allocator on GPU.
The losses of our modes must equal none's bit for bit (exit code 1 otherwise)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The bench options: model and sizes, modes, rounds, outputs."""
    from .._bench.models import MODELS, size_fields

    parser.add_argument("--model", choices=sorted(MODELS), default="gpt",
                        help="benchmark model (default gpt)")
    sizes = parser.add_argument_group("model sizes (each model uses its own; defaults are quick)")
    for name, kind in size_fields().items():
        owners = ", ".join(m for m, spec in MODELS.items() if name in _fields(spec.config))
        sizes.add_argument(f"--{name}", type=kind, default=None, help=f"({owners})")
    parser.add_argument("--modes", default=None,
                        help="comma-separated modes, or 'all' (default: none, the built-in's and "
                             "ours; policy, preset and planner modes run by name or with 'all')")
    parser.add_argument("--list-modes", action="store_true", help="list the modes and exit")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds (default 3)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed rounds first (default 1)")
    parser.add_argument("--warm", action="store_true",
                        help="run each mode's timed step right after an untimed step of the same mode "
                             "(no mode pays for memory the others handed back; twice the time)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the initial weights")
    parser.add_argument("--device", default=None, help="paddle device, e.g. cpu or gpu:0 (default: Paddle's)")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    parser.add_argument("--plot", metavar="FILE.png", help="draw memory against time for every mode")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _fields(config: type) -> list[str]:
    return [f.name for f in dataclasses.fields(config)]


def _config(spec: Any, args: argparse.Namespace) -> Any:
    from .._bench.models import quick_config, size_fields

    given = {name: getattr(args, name) for name in size_fields() if getattr(args, name) is not None}
    own = _fields(spec.config)
    foreign = sorted(set(given) - set(own))
    if foreign:
        raise CLIError(f"bench: --{foreign[0]} is not a size of model {spec.name!r} "
                       f"(its sizes: {', '.join(own)})")
    bad = [k for k, v in given.items() if not isinstance(v, float) and v < 1]
    if bad:
        raise CLIError(f"bench: --{bad[0]} must be at least 1, got {given[bad[0]]}")
    return quick_config(spec.name, **given)


def _modes(text: str | None) -> list:
    from .._bench.modes import BASELINE, MODES

    if text is None:
        return [m for m in MODES.values() if m.default]
    if text.strip() == "all":
        return list(MODES.values())
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in MODES]
    if unknown:
        raise CLIError(f"bench: unknown mode {unknown[0]!r}; modes: {', '.join(MODES)}")
    return [MODES[BASELINE]] + [MODES[n] for n in dict.fromkeys(names) if n != BASELINE]


def _check_args(args: argparse.Namespace) -> None:
    if args.rounds < 1 or args.warmup < 0:
        raise CLIError("bench: --rounds must be at least 1 and --warmup at least 0")
    if args.plot and not args.plot.lower().endswith(".png"):
        raise CLIError(f"bench: --plot writes a PNG file; give a name ending in .png, got {args.plot!r}")
    if args.plot:
        from .._bench.plot import require_matplotlib

        try:
            require_matplotlib()  # before the benchmark runs, not after
        except ImportError as exc:
            raise CLIError(str(exc)) from None
    from .._interop.patch import is_patched

    if is_patched():
        raise CLIError("bench: paddle_recompute.patch_paddle() is in effect, so the built-in modes "
                       "would run ours; call unpatch_paddle() first")


def run(args: argparse.Namespace) -> int:
    """Run the benchmark; 0 when our modes' losses equal none's bit for bit, else 1."""
    if args.list_modes:
        from .._bench.modes import MODES

        for mode in MODES.values():
            print(f"{mode.name:<28} {'exact ' if mode.exact else 'report'} {mode.description}")
        return 0
    _check_args(args)
    use_device("bench", args.device)
    from .._bench.memory import memory_for_current_place
    from .._bench.models import MODELS

    memory = memory_for_current_place()
    if memory.kind == "host allocator":
        ensure_host_memory_stats("bench", may_reexec=args.may_reexec)
    spec, modes = MODELS[args.model], _modes(args.modes)
    cfg = _config(spec, args)
    return _bench(args, spec, cfg, modes, memory)


def _bench(args: argparse.Namespace, spec: Any, cfg: Any, modes: list, memory: Any) -> int:
    import paddle

    from .._bench.report import format_table, loss_check, summarize
    from .._bench.rounds import run_rounds

    print(f"{spec.describe(cfg)} on {paddle.get_device()} ({memory.kind}); {len(modes)} modes, "
          f"{args.warmup} warm-up + {args.rounds} interleaved rounds"
          f"{' (each timed step after an untimed one)' if args.warm else ''}, medians\n", flush=True)
    ticks = len(modes) * (args.warmup + args.rounds + (1 if args.plot else 0))
    bar = progress_bar(ticks, quiet=args.quiet)
    try:
        result = run_rounds(spec, cfg, modes, memory, rounds=args.rounds, warmup=args.warmup,
                            timeline=bool(args.plot), seed=args.seed, warm=args.warm, tick=bar)
    finally:
        bar.close()
    rows, losses = summarize(result), loss_check(result)
    print(format_table(rows, losses))
    print("\nstep ms: forward + backward + AdamW update; fwd act: allocated after the forward minus "
          "before it;\npeak: highest allocation during the step minus the level before it; "
          "/none, /builtin: ratio to none and to builtin reentrant.")
    _write_outputs(args, spec, cfg, memory, rows, losses, result)
    return _verdict(modes, losses)


def _write_outputs(args, spec, cfg, memory, rows, losses, result) -> None:
    import paddle

    if args.json:
        record = {"model": spec.name, "config": dataclasses.asdict(cfg), "device": paddle.get_device(),
                  "memory": memory.kind, "paddle": paddle.__version__, "rounds": args.rounds,
                  "warmup": args.warmup, "modes": rows, "losses_vs_none": losses}
        with open(args.json, "w") as fh:
            json.dump(record, fh, indent=2)
        print(f"wrote {args.json}")
    if args.plot:
        from .._bench.plot import plot_memory_time

        plot_memory_time(args.plot, f"paddle-recompute bench: {spec.describe(cfg)}, {paddle.get_device()}",
                         rows, result.timelines)
        print(f"wrote {args.plot}")


def _verdict(modes: list, losses: dict[str, str]) -> int:
    bad = [m.name for m in modes if m.exact and losses.get(m.name) != "equal"]
    if bad:
        print(f"\nFAILED: losses of {', '.join(bad)} are not bit-for-bit equal to none's")
        return 1
    exact = [m.name for m in modes if m.exact and m.name != "none"]
    if exact:
        print(f"\nLosses of {', '.join(exact)}: bit-for-bit equal to none (asserted).")
    return 0
