"""``paddle-recompute profile MODULE:CALLABLE``: the per-block memory/time table of a model.

The profiler is :func:`paddle_recompute.planner.profile`; this command loads the user's model and
inputs and prints what the profiler returns.  The interface it relies on is small:
``paddle_recompute.planner.profile(model, *inputs)`` returns an object with ``table()`` (text) and,
for ``--json``, ``to_dict()``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ._env import use_device
from ._errors import CLIError
from ._target import call_target

NAME = "profile"
HELP = "per-block memory and time table of a model (MODULE:CALLABLE returns (model, inputs))"
DESCRIPTION = """\
CALLABLE is called with no arguments and returns (model, inputs): model is a paddle.nn.Layer
or a zero-argument factory building one, inputs a tensor, a tuple of positional inputs, or a
dict of keyword inputs (e.g. {"input_ids": ids, "labels": ids} for a causal LM).
Prints the table of paddle_recompute.planner.profile: per block and sublayer, the bytes saved for
backward, forward time and recompute time. -o saves it for `plan MODULE:CALLABLE --profile FILE`
(the same target), which then plans without profiling again."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="MODULE:CALLABLE",
                        help="e.g. mypkg.bench:make or path/to/file.py:make")
    parser.add_argument("--json", metavar="FILE", help="write the profile as JSON")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="save the profile (Profile.save) for `plan --profile FILE`")
    parser.add_argument("--device", default=None, help="paddle device, e.g. cpu or gpu:0 (default: Paddle's)")


def model_and_inputs(target: str, command: str = "profile") -> tuple[Any, tuple, dict]:
    """Call the user's target; the model (built if a factory was given), its positional and
    its keyword inputs."""
    return as_model_and_inputs(call_target(target, command), target, command)


def as_model_and_inputs(made: Any, target: str, command: str) -> tuple[Any, tuple, dict]:
    """What ``target`` returned (``made``) as ``model_and_inputs`` returns it.

    Raises:
        CLIError: it is not ``(model or factory, inputs)``.
    """
    import paddle

    if not (isinstance(made, tuple) and len(made) == 2):
        raise CLIError(f"{command}: {target} must return (model, inputs), got {type(made).__name__}")
    model, inputs = made
    if not isinstance(model, paddle.nn.Layer) and callable(model):
        model = model()
    if not isinstance(model, paddle.nn.Layer):
        raise CLIError(f"{command}: the model from {target} must be a paddle.nn.Layer or a factory "
                       f"returning one, got {type(model).__name__}")
    if isinstance(inputs, dict):
        return model, (), inputs
    return model, inputs if isinstance(inputs, tuple) else (inputs,), {}


def run(args: argparse.Namespace) -> int:
    """Print the profile table; write JSON if asked."""
    from .._planner.profile.measure import profile

    use_device("profile", args.device)
    model, inputs, kwargs = model_and_inputs(args.target)
    result = profile(model, *inputs, **kwargs)
    print(result.table())
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result.to_dict(), fh, indent=2, default=str)
        print(f"wrote {args.json}")
    if args.output:
        result.save(args.output)
        print(f"wrote {args.output}")
    return 0
