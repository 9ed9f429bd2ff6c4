"""The library's one error family."""

from __future__ import annotations

__all__ = ["RecomputeError"]


class RecomputeError(RuntimeError):
    """Raised when recomputation cannot reproduce the forward pass.

    Messages start with the API name, say what differed and how to fix it.
    """
