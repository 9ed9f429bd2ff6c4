"""``mindspore._extends``: ``cell_attr_register``.

MindSpore's decorator on a Cell's ``__init__`` records the constructor's arguments for graph
compilation; a PyNative run computes the same, so the ``__init__`` runs as written.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = ["cell_attr_register"]


def cell_attr_register(fn: Callable | None = None, attrs: Any = None) -> Any:
    """``@cell_attr_register`` / ``@cell_attr_register(attrs=...)``."""

    def decorate(init: Callable) -> Callable:
        @functools.wraps(init)
        def wrapper(self, *args: Any, **kwargs: Any) -> Any:
            return init(self, *args, **kwargs)

        return wrapper

    return decorate(fn) if callable(fn) else decorate
