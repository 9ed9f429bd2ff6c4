"""Everything recomputation must replay, captured at forward as one value.

NOTE [ Replay ]: recomputation runs the function again with (1) the random states of the
forward (if ``preserve_rng_state``), (2) the forward's autocast settings, (3) grad enabled,
and (4) the running statistics of stateful layers frozen, so BatchNorm updates them once per
step.  Everything is put back in ``finally`` blocks, so an exception in the recomputed
function leaves RNG, AMP, grad mode and buffers as they were.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ._amp import AmpState, grad_mode
from ._layers import frozen_buffers
from ._rng import RngState

__all__ = ["ForwardState"]


class ForwardState:
    """RNG (optional) and AMP state of a forward call, plus the layers it runs."""

    __slots__ = ("rng", "amp", "roots")

    def __init__(self, preserve_rng_state: bool, roots: tuple):
        self.rng = RngState.capture() if preserve_rng_state else None
        self.amp = AmpState.capture()
        self.roots = roots

    @contextlib.contextmanager
    def replayed(self) -> Iterator[None]:
        """Recomputation context; see NOTE [ Replay ]."""
        with contextlib.ExitStack() as stack:
            if self.rng is not None:
                stack.enter_context(self.rng.replayed())
            stack.enter_context(self.amp.replayed())
            stack.enter_context(grad_mode(True))
            stack.enter_context(frozen_buffers(self.roots))
            yield
