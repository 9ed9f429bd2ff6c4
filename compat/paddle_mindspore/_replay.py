"""The one place this subpackage touches paddle-recompute's internal state replay.

A :class:`Snapshot` taken before a computation lets it run again later with the same random
streams (Paddle's, numpy's, Python's, registered providers), the same autocast settings and
the running statistics of stateful layers (BatchNorm) frozen, exactly as the core replays a
recompute region (NOTE [ Replay ] in ``paddle_recompute/_state.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import paddle

from paddle_recompute.extend import ForwardState

__all__ = ["Snapshot"]


class Snapshot:
    """Replayable state of one forward computation."""

    __slots__ = ("_state",)

    def __init__(self, random: bool, roots: tuple = ()):
        self._state = ForwardState(random, roots)

    @contextmanager
    def replayed(self) -> Iterator[None]:
        """Run the body as the forward ran, without building a graph."""
        with self._state.replayed(), paddle.no_grad():
            yield
