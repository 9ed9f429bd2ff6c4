"""``mindspore.lazy_inline``: in PyNative mode the decorated ``__init__`` runs as written.

MindSpore uses the mark to reuse one compiled graph for repeated cells in graph mode; a
PyNative run computes the same either way.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = ["lazy_inline"]


def lazy_inline(fn: Callable | None = None, attrs: Any = None, policy: Any = None) -> Any:
    """``@lazy_inline`` / ``@lazy_inline(attrs=...)`` on a Cell's ``__init__``."""

    def decorate(init: Callable) -> Callable:
        @functools.wraps(init)
        def wrapper(self, *args: Any, **kwargs: Any) -> Any:
            return init(self, *args, **kwargs)

        return wrapper

    return decorate(fn) if callable(fn) else decorate
