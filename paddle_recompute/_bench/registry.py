"""The registry of recompute modes the benchmark compares (``modes.py`` fills it).

A mode turns a freshly built model (and a sample of its inputs) into the runner its
blocks go through.  Policies and the planner plug in with one call each, e.g.::

    register_mode("ours policy=dots", runner=lambda block, x: recompute(
        block, x, use_reentrant=False, policy=...))
    register_mode("planner 50%", prepare=lambda model, inputs: runner_from_plan(...))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from paddle import nn

from .blocks import Runner

__all__ = ["Mode", "MODES", "register_mode", "BASELINE", "BUILTIN"]

BASELINE = "none"
BUILTIN = "builtin reentrant"


@dataclass(frozen=True)
class Mode:
    """One way of running the blocks.

    ``prepare(model, inputs) -> runner`` is called once per benchmark on the model built
    for this mode.  ``exact`` modes must reproduce the baseline's losses bit for bit (the
    benchmark fails otherwise); for the others the comparison is only reported.
    """

    name: str
    prepare: Callable[[nn.Layer, Any], Runner]
    exact: bool
    description: str
    default: bool = True


MODES: dict[str, Mode] = {}


def register_mode(
    name: str,
    runner: Runner | None = None,
    *,
    prepare: Callable[[nn.Layer, Any], Runner] | None = None,
    exact: bool = True,
    description: str = "",
    default: bool = True,
) -> Mode:
    """Add a mode to the benchmark (replacing one of the same name).

    Args:
        name: what the tables and ``--modes`` call it.
        runner: ``runner(block, x) -> y`` used for every model, or
        prepare: ``prepare(model, inputs) -> runner`` for modes that look at the model first
            (a planner); exactly one of the two.
        exact: losses must equal the ``none`` mode's bit for bit.
        description: one line for ``bench --list-modes``.
        default: run when ``--modes`` is not given (else only by name or ``--modes all``).

    Returns:
        The registered :class:`Mode`.

    Raises:
        TypeError: neither or both of ``runner`` and ``prepare`` given, or not callable.

    Example:
        >>> from paddle_recompute._bench.registry import MODES, register_mode
        >>> mode = register_mode("example", lambda block, x: block(x), exact=True)
        >>> del MODES["example"]
    """
    if (runner is None) == (prepare is None):
        raise TypeError(f"register_mode({name!r}): pass exactly one of `runner` and `prepare`")
    if not callable(runner if prepare is None else prepare):
        raise TypeError(f"register_mode({name!r}): `runner`/`prepare` must be callable")
    if prepare is None:
        def prepare(model: nn.Layer, inputs: Any, _runner: Runner = runner) -> Runner:
            return _runner
    mode = Mode(name, prepare, exact, description, default)
    MODES[name] = mode
    return mode


