"""The ``paddle-recompute`` command line: one module per subcommand.

A subcommand module provides ``NAME``, ``HELP``, ``DESCRIPTION``,
``add_arguments(parser)`` and ``run(args) -> exit code``; adding one to :data:`COMMANDS`
makes it available.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import bench, parity, plan, profile
from ._errors import CLIError

__all__ = ["main", "COMMANDS", "build_parser"]

COMMANDS = (bench, profile, plan, parity)


def build_parser() -> argparse.ArgumentParser:
    """The parser with every subcommand of :data:`COMMANDS`."""
    parser = argparse.ArgumentParser(
        prog="paddle-recompute",
        description="Activation recomputation for PaddlePaddle: benchmark, profile, plan and check parity.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        p = sub.add_parser(command.NAME, help=command.HELP, description=command.DESCRIPTION,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        command.add_arguments(p)
        p.set_defaults(run=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``paddle-recompute`` with ``argv`` (default: the process's arguments).

    Returns:
        The exit code: 0 success, 1 a failed check (parity, bench losses), 2 bad usage.

    Example:
        >>> from paddle_recompute.__main__ import main
        >>> main(["bench", "--list-modes"])  # doctest: +ELLIPSIS
        none ...
        0
    """
    parser = build_parser()
    args = parser.parse_args(None if argv is None else list(argv))
    if args.command is None:
        parser.print_help()
        return 2
    args.may_reexec = argv is None  # only the program itself may re-execute (see _env)
    try:
        return args.run(args)
    except CLIError as exc:
        print(f"paddle-recompute: error: {exc}", file=sys.stderr)
        return 2
