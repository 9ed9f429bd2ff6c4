"""``paddle-recompute plan MODULE:CALLABLE --budget 0.5 -o plan.json``: a saved plan.

The target is loaded as for ``profile`` (``CALLABLE`` returns ``(model, inputs)``).  The
plan is :func:`paddle_recompute.planner.plan` over every option kind; ``-o`` writes it with
``Plan.save`` (apply it later with ``Plan.load(path).apply(model)``).  ``--plot`` draws the
predicted frontier: for budgets from the least achievable memory to no recompute, the
plan's predicted memory and extra time, with every kind alone and the kinds without
``ops`` beside it (plans on the same profile: no model runs beyond the first plan's).
"""

from __future__ import annotations

import argparse

from ._env import use_device
from ._errors import CLIError
from .profile import model_and_inputs

NAME = "plan"
HELP = "choose what to recompute under a memory budget and save the plan (JSON)"
DESCRIPTION = """\
CALLABLE is called with no arguments and returns (model, inputs), as for `profile`.
Prints the plan of paddle_recompute.planner.plan(model, *inputs, budget=BUDGET) and writes
it as JSON with -o; apply it in a training script with
    paddle_recompute.planner.Plan.load("plan.json").apply(model)
or check it with `paddle-recompute parity MODULE:CALLABLE --plan plan.json` (the same target).
--profile FILE plans on a profile saved by `profile MODULE:CALLABLE -o FILE`.
--plot draws the predicted memory/time frontier of the plan's option kinds (PNG)."""

_POINTS = 24


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="MODULE:CALLABLE",
                        help="e.g. mypkg.bench:make or path/to/file.py:make")
    parser.add_argument("--budget", required=True, type=_budget,
                        help="a fraction in (0, 1] of no recompute's activation bytes, or bytes (int)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the plan as JSON")
    parser.add_argument("--profile", metavar="FILE", default=None,
                        help="a profile saved by `paddle-recompute profile ... -o FILE` of the same "
                             "model and input shapes: plan on it without profiling again")
    parser.add_argument("--plot", metavar="PNG", help="draw the predicted frontier")
    parser.add_argument("--options", default=None,
                        help="comma-separated option kinds (default: every registered kind)")
    parser.add_argument("--final-rounds", type=int, default=None,
                        help="rounds measuring the few best plans that fit; the fastest is returned "
                             "if it also wins a duel against the best-predicted (default 3; 0: the "
                             "solver's plan, unmeasured)")
    parser.add_argument("--device", default=None, help="paddle device, e.g. cpu or gpu:0 (default: Paddle's)")


def _budget(text: str):
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a fraction or bytes, got {text!r}") from None


def run(args: argparse.Namespace) -> int:
    """Plan, print, save and plot."""
    from .._planner.plan.make import plan
    from .._planner.plan.timings import timings_line
    from .._planner.solvers.blocks import InfeasibleBudget

    use_device("plan", args.device)
    model, inputs, kwargs = model_and_inputs(args.target, "plan")
    options = args.options.split(",") if args.options else None
    try:
        rounds = {} if args.final_rounds is None else {"final_rounds": args.final_rounds}
        saved = {} if args.profile is None else {"profile": _load_profile(args.profile)}
        result = plan(model, *inputs, budget=args.budget, options=options, **rounds, **saved,
                      **kwargs)
    except (InfeasibleBudget, TypeError, ValueError) as exc:
        message = str(exc)
        raise CLIError(message if message.startswith("plan") else f"plan: {message}") from None
    print(result)
    if result.timings is not None:
        print(timings_line(result.timings))
    if args.output:
        result.save(args.output)
        print(f"wrote {args.output}")
    if args.plot:
        _plot(args.plot, model, inputs, kwargs, result, options)
        print(f"wrote {args.plot}")
    return 0


def _load_profile(path: str):
    from .._planner.profile.result import Profile

    try:
        return Profile.load(path)
    except OSError as exc:
        raise CLIError(f"plan: --profile {path!r}: {exc.strerror or exc}") from None


def _plot(path: str, model, inputs, kwargs, chosen, options) -> None:
    from .._bench.plot import plot_frontier
    from .._planner.options.kinds import option_kinds
    from .._planner.plan.make import plan
    from .._planner.solvers.blocks import InfeasibleBudget

    prof, base = chosen.profile, chosen.baseline_bytes
    kinds = list(options or option_kinds())
    sets = {"all kinds": kinds, **{k: ["keep", k] for k in kinds if k != "keep"}}
    if "ops" in kinds:
        sets["all but ops"] = [k for k in kinds if k != "ops"]
    full = sum(prof.layers[b].recompute_s or 0.0 for b in prof.blocks) or 1e-12
    curves: dict = {}
    for label, kind_set in sets.items():
        for k in range(_POINTS + 1):
            try:
                p = plan(model, *inputs, budget=max(k / _POINTS, 1e-9), options=kind_set,
                         profile=prof, final_rounds=0, **kwargs)
            except InfeasibleBudget:
                continue
            curves.setdefault(label, {})[p.predicted_bytes] = p.extra_s
    points = {label: sorted((m / base, t / full) for m, t in pts.items())
              for label, pts in curves.items()}
    plot_frontier(path, f"predicted frontier (budget {chosen.budget / base:.2f} of "
                        f"{base / 2**20:.1f} MiB)", points,
                  (chosen.predicted_bytes / base, chosen.extra_s / full))
