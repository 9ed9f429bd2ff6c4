"""Segmented recompute of a chain of callables (``recompute_sequential``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import paddle

from ._api import recompute

__all__ = ["recompute_sequential", "run_segments", "callables", "checked_segments"]

_SEQ_KEYS = ("segments", "preserve_rng_state", "use_reentrant")


def recompute_sequential(
    ctx: Mapping[str, Any], functions: paddle.nn.Sequential | Sequence[Callable], *args: Any, **kwargs: Any
) -> Any:
    """Recompute a chain of callables in ``ctx["segments"]`` segments.

    Mirrors ``paddle.incubate.distributed.fleet.recompute_sequential``: every segment but
    the last is recomputed; the first callable receives ``*args, **kwargs`` and each later
    one the previous output as its single argument (as ``paddle.nn.Sequential`` does), so
    any number of segments works whatever the batch or output structure.

    Args:
        ctx: ``{"segments": n, "preserve_rng_state": bool, "use_reentrant": bool}``;
            ``segments`` defaults to 1, the others to True.
        functions: a ``paddle.nn.Sequential`` or a sequence of callables.

    Returns:
        The output of the last callable.

    Raises:
        TypeError: ``ctx`` is not a mapping or ``functions`` holds a non-callable.
        ValueError: ``segments`` is below 1 or above the number of callables, or ``ctx``
            has an unknown key.

    Example:
        >>> import paddle
        >>> from paddle_recompute import recompute_sequential
        >>> model = paddle.nn.Sequential(paddle.nn.Linear(10, 10), paddle.nn.Linear(10, 2))
        >>> out = recompute_sequential({"segments": 2}, model, paddle.ones([8, 10]))
    """
    funcs, segments, options = _sequential_plan(ctx, functions)
    return run_segments(funcs, segments, args, kwargs, options)


def run_segments(funcs: list, segments: int, args: tuple, kwargs: dict, options: dict) -> Any:
    """Recompute every segment but the last; chain outputs as ``paddle.nn.Sequential`` does."""
    size = len(funcs) // segments
    value: Any = None
    start = 0
    for seg in range(segments - 1):
        chunk = _Chain(funcs[start:start + size])
        value = (recompute(chunk, *args, **options, **kwargs) if seg == 0
                 else recompute(chunk, value, **options))
        start += size
    last = _Chain(funcs[start:])
    return last(*args, **kwargs) if segments == 1 else last(value)


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
    segments = checked_segments(api, "ctx['segments']", ctx.get("segments", 1), len(funcs))
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
        raise ValueError(
            f"{api}: {name} must be an integer from 1 to the number of functions ({n}), "
            f"got {segments!r}"
        )
    return segments
