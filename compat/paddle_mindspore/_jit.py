"""``mindspore.jit``: accepted, and the function runs eagerly.

MindSpore compiles a ``jit`` function to a graph; here every function runs on Paddle's
dygraph, with the same kernels either way (see ``context.py`` for ``GRAPH_MODE``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["jit"]


def jit(function: Callable | None = None, *args: Any, **options: Any) -> Any:
    """``@jit``, ``@jit(...)`` or ``jit(fn, ...)``: returns the function unchanged."""
    if function is None or not callable(function):
        return lambda fn: fn
    return function
