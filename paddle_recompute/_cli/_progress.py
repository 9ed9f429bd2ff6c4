"""A small progress bar on stderr (no dependency).

On a terminal it redraws one line; otherwise (a log, a test) it prints a line every
tenth of the way, so logs stay short.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """Counts ``total`` ticks; ``progress(label)`` advances by one.

    Example:
        >>> import io
        >>> bar = Progress(2, stream=io.StringIO())
        >>> bar("a"); bar("b"); bar.close()
    """

    def __init__(self, total: int, *, stream: TextIO | None = None, enabled: bool = True, width: int = 28):
        self.total, self.done, self.width, self.enabled = max(total, 1), 0, width, enabled
        self.stream = sys.stderr if stream is None else stream
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = time.perf_counter()
        self._last_tenth = -1

    def __call__(self, label: str = "") -> None:
        self.done = min(self.done + 1, self.total)
        if not self.enabled:
            return
        tenth = 10 * self.done // self.total
        if not self.tty and tenth == self._last_tenth:
            return
        self._last_tenth = tenth
        filled = self.width * self.done // self.total
        elapsed = time.perf_counter() - self.start
        line = (f"[{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total} "
                f"{elapsed:5.1f}s {label}")
        self.stream.write(f"\r{line[:100]:<100}" if self.tty else line + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End the bar's line (on a terminal)."""
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()
