"""Segmented recompute of a chain of callables (``recompute_sequential``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import paddle

from .._entry.recompute import recompute
from .._planner.plan.make import budget_bytes
from .._planner.plan.segments import auto_starts

__all__ = ["recompute_sequential", "run_segments", "callables", "checked_segments"]

_SEQ_KEYS = ("segments", "budget", "preserve_rng_state", "use_reentrant")


def recompute_sequential(
    ctx: Mapping[str, Any], functions: paddle.nn.Sequential | Sequence[Callable], *args: Any, **kwargs: Any
) -> Any:
    """Recompute a chain of callables in ``ctx["segments"]`` segments.

    Mirrors ``paddle.incubate.distributed.fleet.recompute_sequential``: every segment but
    the last is recomputed; the first callable receives ``*args, **kwargs`` and each later
    one the previous output as its single argument (as ``paddle.nn.Sequential`` does), so
    any number of segments works whatever the batch or output structure.

    ``"segments": "auto"`` chooses the boundaries (not necessarily equal lengths): the
    first call with a new input signature runs the chain once more to measure each
    callable's saved bytes, output bytes and time, then an exact solver (NOTE [ Segment
    model ] in ``_planner/solvers/blocks.py``) minimises the predicted peak of held activations, or,
    with ``"budget"`` (bytes, or a float in (0, 1]: a fraction of the chain's activations
    without recompute), the recompute time among cuts whose predicted peak fits.

    Args:
        ctx: ``{"segments": n or "auto", "budget": ..., "preserve_rng_state": bool,
            "use_reentrant": bool}``; ``segments`` defaults to 1, ``budget`` (only with
            ``"auto"``) to None, the others to True.
        functions: a ``paddle.nn.Sequential`` or a sequence of callables.

    Returns:
        The output of the last callable.

    Raises:
        TypeError: ``ctx`` is not a mapping or ``functions`` holds a non-callable.
        ValueError: ``segments`` is below 1 or above the number of callables (or a string
            other than ``"auto"``), ``budget`` is given without ``"auto"`` or is out of
            range, or ``ctx`` has an unknown key.
        InfeasibleBudget: (a ValueError) no segmentation fits ``budget``.

    Example:
        >>> import paddle
        >>> from paddle_recompute import recompute_sequential
        >>> model = paddle.nn.Sequential(paddle.nn.Linear(10, 10), paddle.nn.Linear(10, 2))
        >>> out = recompute_sequential({"segments": 2}, model, paddle.ones([8, 10]))
    """
    funcs, segments, options = _sequential_plan(ctx, functions)
    if segments == "auto":
        starts = auto_starts(funcs, args, kwargs, ctx.get("budget"))
        return run_starts(funcs, starts, args, kwargs, options)
    return run_segments(funcs, segments, args, kwargs, options)


def run_segments(funcs: list, segments: int, args: tuple, kwargs: dict, options: dict) -> Any:
    """Recompute every segment but the last (equal lengths, the last takes the rest)."""
    size = len(funcs) // segments
    return run_starts(funcs, tuple(range(0, size * segments, size)), args, kwargs, options)


def run_starts(funcs: list, starts: tuple, args: tuple, kwargs: dict, options: dict) -> Any:
    """Segments begin at ``starts`` (the first is 0); every segment but the last is
    recomputed; outputs chain as ``paddle.nn.Sequential`` does."""
    value: Any = None
    ends = starts[1:] + (len(funcs),)
    for seg, (start, end) in enumerate(zip(starts[:-1], ends[:-1], strict=True)):
        chunk = _Chain(funcs[start:end])
        value = (recompute(chunk, *args, **options, **kwargs) if seg == 0
                 else recompute(chunk, value, **options))
    last = _Chain(funcs[starts[-1]:])
    return last(*args, **kwargs) if len(starts) == 1 else last(value)


class _Chain:
    """``f_n(...f_2(f_1(*args, **kwargs)))``; exposes its layers for state handling."""

    __slots__ = ("functions",)

    def __init__(self, functions):
        self.functions = functions

    @property
    def _recompute_roots(self):
        return self.functions

    def __call__(self, *args, **kwargs):
        value = self.functions[0](*args, **kwargs)
        for f in self.functions[1:]:
            value = f(value)
        return value


def _sequential_plan(ctx, functions):
    api = "recompute_sequential"
    if not isinstance(ctx, Mapping):
        raise TypeError(f"{api}: `ctx` must be a dict like {{'segments': 2}}, got {ctx!r}")
    unknown = sorted(set(ctx) - set(_SEQ_KEYS))
    if unknown:
        raise ValueError(f"{api}: unknown ctx keys {unknown}; allowed: {list(_SEQ_KEYS)}")
    funcs = callables(api, functions)
    segments = ctx.get("segments", 1)
    if segments != "auto":
        segments = checked_segments(api, "ctx['segments']", segments, len(funcs))
        if ctx.get("budget") is not None:
            raise ValueError(f"{api}: ctx['budget'] needs ctx['segments'] = 'auto' (a fixed "
                             f"number of segments has nothing to choose)")
    elif ctx.get("budget") is not None:
        budget_bytes(api, ctx["budget"], 1)  # type and range, before any work
    options = {"preserve_rng_state": ctx.get("preserve_rng_state", True),
               "use_reentrant": ctx.get("use_reentrant", True)}
    return funcs, segments, options


def callables(api: str, functions) -> list:
    """The callables of a ``paddle.nn.Sequential`` or a sequence, checked."""
    if isinstance(functions, paddle.nn.Sequential):
        # what Sequential.forward iterates; children() would drop a layer used twice
        funcs = [f for f in functions._sub_layers.values() if f is not None]
    elif isinstance(functions, Sequence) and not isinstance(functions, (str, bytes)):
        funcs = list(functions)
    else:
        raise TypeError(f"{api}: `functions` must be a paddle.nn.Sequential or a list of callables")
    bad = [i for i, f in enumerate(funcs) if not callable(f)]
    if bad:
        raise TypeError(f"{api}: functions at positions {bad} are not callable")
    if not funcs:
        raise ValueError(f"{api}: `functions` is empty")
    return funcs


def checked_segments(api: str, name: str, segments, n: int) -> int:
    if isinstance(segments, bool) or not isinstance(segments, int) or not 1 <= segments <= n:
        auto = " or 'auto'" if api == "recompute_sequential" else ""
        raise ValueError(
            f"{api}: {name} must be an integer from 1 to the number of functions ({n}){auto}, "
            f"got {segments!r}"
        )
    return segments
