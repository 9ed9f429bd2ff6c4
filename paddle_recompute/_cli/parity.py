"""``paddle-recompute parity MODULE:CALLABLE``: loss parity of a training with and without recompute.

The target is the one ``profile`` and ``plan`` take (``CALLABLE`` returns ``(model,
inputs)``), checked with a saved plan (``--plan``); or a training case (``build_model``,
``train_step``...) for a check with the user's own optimizer and loss.  The target's answer
tells which: a pair whose second item is not callable is ``(model, inputs)``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Mapping
from typing import Any

import paddle

from ._env import use_device
from ._errors import CLIError
from ._target import call_target

NAME = "parity"
HELP = "check that training with recompute matches training without it, bit for bit"
DESCRIPTION = """\
CALLABLE is called with no arguments. It returns either

  (model, inputs), as for `profile` and `plan`: trains the model built by the target with
  and without the plan of --plan FILE (from `paddle-recompute plan MODULE:CALLABLE -o FILE`),
  each step a forward on the inputs, the sum of every floating-point output that takes
  gradients as the loss (the step the planner measures), backward and an SGD update (--lr);
  the target is called once per training, so it must build the same model and inputs each
  time from Paddle's, NumPy's or Python's seeded generators (each run is seeded alike); or

  the arguments of paddle_recompute.testing.assert_loss_parity, for your own optimizer and
  loss: a dict with build_model and train_step (and optionally recompute_plan, steps, seed),
  or a tuple (build_model, train_step[, recompute_plan]). build_model(recompute: bool) ->
  (model, optimizer); train_step(model, optimizer, step) -> loss after loss.backward().
  --plan FILE, if given, is the recompute_plan.

Exit code 0 when losses, gradients, parameters and buffers agree, 1 otherwise."""

_KEYS = ("build_model", "train_step", "recompute_plan", "steps", "seed")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="MODULE:CALLABLE",
                        help="e.g. mypkg.bench:make (as for profile and plan) or path/to/file.py:make")
    parser.add_argument("--plan", metavar="FILE", default=None,
                        help="a plan saved by `paddle-recompute plan ... -o FILE` (or Plan.save), "
                             "applied to the model of the recompute run")
    parser.add_argument("--lr", type=float, default=0.01,
                        help="SGD learning rate for a (model, inputs) target (default 0.01)")
    parser.add_argument("--steps", type=int, default=None,
                        help="training steps (default: the target's, else 3)")
    parser.add_argument("--seed", type=int, default=None,
                        help="seed of both runs (default: the target's, else 0)")
    parser.add_argument("--rtol", type=float, default=0.0, help="relative tolerance (default 0: exact)")
    parser.add_argument("--atol", type=float, default=0.0, help="absolute tolerance (default 0: exact)")
    parser.add_argument("--device", default=None, help="paddle device, e.g. cpu or gpu:0 (default: Paddle's)")


def parity_case(target: str, plan_file: str | None = None, lr: float = 0.01) -> dict[str, Any]:
    """The target's answer as ``assert_loss_parity`` keyword arguments; ``plan_file``: a
    saved plan to apply in the recompute run."""
    made = call_target(target, "parity")
    if _is_model_and_inputs(made):
        return _model_case(target, made, plan_file, lr)
    if isinstance(made, Mapping):
        unknown = sorted(set(made) - set(_KEYS))
        if unknown:
            raise CLIError(f"parity: {target} returned unknown keys {unknown}; allowed: {list(_KEYS)}")
        case = dict(made)
    elif isinstance(made, tuple) and len(made) in (2, 3):
        case = dict(zip(_KEYS, made, strict=False))
    else:
        raise CLIError(f"parity: {target} must return a dict or a tuple (build_model, train_step"
                       f"[, recompute_plan]), or (model, inputs) as for `profile` and `plan`; got "
                       f"{type(made).__name__}")
    for key in ("build_model", "train_step"):
        if not callable(case.get(key)):
            raise CLIError(f"parity: {target} must provide a callable {key}")
    if plan_file is not None:
        if case.get("recompute_plan") is not None:
            raise CLIError(f"parity: {target} gives a recompute_plan and --plan gives another; "
                           f"pass one of them")
        case["recompute_plan"] = _load_plan(plan_file).apply
    return case


def _is_model_and_inputs(made: Any) -> bool:
    """``(model or factory, inputs)``: a pair whose inputs are tensors, a tuple, a list or a
    dict, where a training case's second item is ``train_step``, a function.  (A tensor can
    be callable: PaddleFormers gives ``paddle.Tensor`` a ``__call__`` when imported.)"""
    if not (isinstance(made, tuple) and len(made) == 2):
        return False
    inputs = made[1]
    return isinstance(inputs, (paddle.Tensor, tuple, list, Mapping)) or not callable(inputs)


def _load_plan(path: str):
    from .._planner.plan.value import Plan

    try:
        return Plan.load(path)
    except OSError as exc:
        raise CLIError(f"parity: --plan {path!r}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise CLIError(f"parity: --plan: {exc}") from None


def _model_case(target: str, made: tuple, plan_file: str | None, lr: float) -> dict[str, Any]:
    """A training case for a ``(model, inputs)`` target: the target builds each run's model
    and inputs; the saved plan is applied in the recompute run."""
    import paddle

    from .profile import as_model_and_inputs

    if plan_file is None:
        raise CLIError(f"parity: {target} returns (model, inputs); pass the plan to check: "
                       f"--plan plan.json (from `paddle-recompute plan {target} --budget 0.5 "
                       f"-o plan.json`)")
    model = as_model_and_inputs(made, target, "parity")[0]  # its errors now, before any training
    saved = _load_plan(plan_file)
    _fits(saved, model, plan_file, target)
    del model
    runs: dict = {}

    def build_model(recompute: bool):
        model, inputs, kwargs = as_model_and_inputs(call_target(target, "parity"), target, "parity")
        runs[id(model)] = (inputs, kwargs)
        return model, paddle.optimizer.SGD(learning_rate=lr, parameters=model.parameters())

    def train_step(model, optimizer, step):
        inputs, kwargs = runs[id(model)]
        loss = step_loss(model(*inputs, **kwargs))
        loss.backward()
        return loss

    return {"build_model": build_model, "train_step": train_step, "recompute_plan": saved.apply}


def _fits(saved, model, plan_file: str, target: str) -> None:
    """Apply ``saved`` to ``model`` and take it off again: its errors before any training."""
    try:
        saved.apply(model).remove()
    except ValueError as exc:
        raise CLIError(f"parity: --plan {plan_file!r} does not fit the model of {target}: "
                       f"{exc}") from None


def step_loss(out: Any):
    """The loss of the step the planner measures (``_planner/harness.py``'s ``step``: a
    backward from every floating-point output that takes gradients, with gradient one): the
    sum of those outputs' sums, in float32.

    Raises:
        CLIError: no output takes gradients.
    """
    import paddle

    from .._core import tree

    outs = [t for t in tree.flatten(out)[0] if not t.stop_gradient and t.is_floating_point()]
    if not outs:
        raise CLIError("parity: the model's output has no floating-point tensor that takes "
                       "gradients, so there is nothing to train")
    return paddle.add_n([t.sum().astype("float32") for t in outs])


def run(args: argparse.Namespace) -> int:
    """Run both trainings; print PASS or FAIL with the report; 0 on parity, 1 otherwise."""
    from .._interop.parity import assert_loss_parity

    use_device("parity", args.device)
    case = parity_case(args.target, args.plan, args.lr)
    steps = args.steps if args.steps is not None else case.get("steps", 3)
    seed = args.seed if args.seed is not None else case.get("seed", 0)
    tol = "exact" if args.rtol == 0 and args.atol == 0 else f"rtol={args.rtol:g}, atol={args.atol:g}"
    with_plan = f" with plan {args.plan}" if args.plan else ""
    print(f"parity of {args.target}{with_plan}: {steps} steps from seed {seed}, {tol}", flush=True)
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
