"""``paddle-recompute parity MODULE:CALLABLE``: loss parity of a training with and without recompute."""

from __future__ import annotations

import argparse
import time
from collections.abc import Mapping
from typing import Any

from ._env import use_device
from ._errors import CLIError
from ._target import call_target

NAME = "parity"
HELP = "check that training with recompute matches training without it, bit for bit"
DESCRIPTION = """\
CALLABLE is called with no arguments and returns the arguments of
paddle_recompute.testing.assert_loss_parity: a dict with build_model and train_step (and
optionally recompute_plan, steps, seed), or a tuple (build_model, train_step[, recompute_plan]).
build_model(recompute: bool) -> (model, optimizer); train_step(model, optimizer, step) -> loss
after loss.backward(). Exit code 0 when losses, gradients, parameters and buffers agree, 1 otherwise."""

_KEYS = ("build_model", "train_step", "recompute_plan", "steps", "seed")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="MODULE:CALLABLE", help="e.g. mypkg.train:parity_case")
    parser.add_argument("--steps", type=int, default=None,
                        help="training steps (default: the target's, else 3)")
    parser.add_argument("--seed", type=int, default=None,
                        help="seed of both runs (default: the target's, else 0)")
    parser.add_argument("--rtol", type=float, default=0.0, help="relative tolerance (default 0: exact)")
    parser.add_argument("--atol", type=float, default=0.0, help="absolute tolerance (default 0: exact)")
    parser.add_argument("--device", default=None, help="paddle device, e.g. cpu or gpu:0 (default: Paddle's)")


def parity_case(target: str) -> dict[str, Any]:
    """The target's answer as ``assert_loss_parity`` keyword arguments."""
    made = call_target(target, "parity")
    if isinstance(made, Mapping):
        unknown = sorted(set(made) - set(_KEYS))
        if unknown:
            raise CLIError(f"parity: {target} returned unknown keys {unknown}; allowed: {list(_KEYS)}")
        case = dict(made)
    elif isinstance(made, tuple) and len(made) in (2, 3):
        case = dict(zip(_KEYS, made, strict=False))
    else:
        raise CLIError(f"parity: {target} must return a dict or a tuple (build_model, train_step"
                       f"[, recompute_plan]), got {type(made).__name__}")
    for key in ("build_model", "train_step"):
        if not callable(case.get(key)):
            raise CLIError(f"parity: {target} must provide a callable {key}")
    return case


def run(args: argparse.Namespace) -> int:
    """Run both trainings; print PASS or FAIL with the report; 0 on parity, 1 otherwise."""
    from .._interop.parity import assert_loss_parity

    use_device("parity", args.device)
    case = parity_case(args.target)
    steps = args.steps if args.steps is not None else case.get("steps", 3)
    seed = args.seed if args.seed is not None else case.get("seed", 0)
    tol = "exact" if args.rtol == 0 and args.atol == 0 else f"rtol={args.rtol:g}, atol={args.atol:g}"
    print(f"parity of {args.target}: {steps} steps from seed {seed}, {tol}", flush=True)
    start = time.perf_counter()
    try:
        assert_loss_parity(case["build_model"], case["train_step"], steps=steps, seed=seed,
                           recompute_plan=case.get("recompute_plan"), rtol=args.rtol, atol=args.atol)
    except AssertionError as exc:
        print(f"FAIL ({time.perf_counter() - start:.1f} s)\n{exc}")
        return 1
    print(f"PASS ({time.perf_counter() - start:.1f} s): losses, gradients of every step, final "
          f"parameters and buffers agree with and without recompute")
    return 0
