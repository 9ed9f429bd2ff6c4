"""The benchmark's progress bar: tqdm on stderr.

tqdm gives rates, an ETA, notebook and redirect handling; here it only learns to take one
tick per call with the step's label.  It is silent when its stream is not a terminal (a
log, CI, a test) and under ``--quiet``.
"""

from __future__ import annotations

from typing import TextIO

from tqdm import tqdm

__all__ = ["progress_bar"]


class _Bar(tqdm):
    """A tqdm bar that advances by one per call, showing ``label`` beside it.

    Without tqdm's monitor thread: while another thread is alive, recompute keeps its hook
    pair installed between regions (NOTE [ Threads ] in ``_core/hooks.py``), and the
    benchmark's plain modes would then save through it.
    """

    monitor_interval = 0

    def __call__(self, label: str = "") -> None:
        self.set_postfix_str(label, refresh=False)
        self.update()


def progress_bar(total: int, *, quiet: bool = False, stream: TextIO | None = None) -> _Bar:
    """A bar of ``total`` ticks; ``bar(label)`` advances it, ``bar.close()`` ends it.

    Example:
        >>> import io
        >>> bar = progress_bar(2, stream=io.StringIO())  # not a terminal: silent
        >>> bar("a"); bar("b"); bar.close()
    """
    # disable=None: tqdm turns itself off when the stream is not a terminal
    return _Bar(total=total, file=stream, disable=True if quiet else None, unit="step",
                dynamic_ncols=True, leave=True)
