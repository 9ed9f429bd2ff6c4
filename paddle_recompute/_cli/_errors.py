"""The command line's error: a message for the user, printed without a traceback."""

from __future__ import annotations

__all__ = ["CLIError"]


class CLIError(Exception):
    """Bad input or a missing dependency; ``main`` prints it and returns exit code 2."""
