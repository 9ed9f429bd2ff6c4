"""Everything recomputation must replay, captured at forward as one value.

NOTE [ Replay ]: recomputation runs the function again with (1) the random states of the
forward (if ``preserve_rng_state``), (2) the forward's autocast settings, (3) grad enabled,
and (4) the running statistics of stateful layers frozen, so BatchNorm updates them once per
step.  Everything is put back in ``__exit__``, so an exception in the recomputed function
leaves RNG, AMP, grad mode and buffers as they were.  (A class, not ``ExitStack`` plus
generator context managers: this runs once per recomputed region and the difference is
~25 µs a call.)
"""

from __future__ import annotations

from .amp import AmpState, grad_enabled, set_grad_enabled
from .layers import freeze_buffers, restore_buffers, walk
from .rng import RngState

__all__ = ["ForwardState"]


class ForwardState:
    """RNG (optional) and AMP state of a forward call, plus the layers it runs."""

    __slots__ = ("rng", "amp", "roots", "_layers")

    def __init__(self, preserve_rng_state: bool, roots: tuple):
        self.rng = RngState.capture() if preserve_rng_state else None
        self.amp = AmpState.capture()
        self.roots = roots
        self._layers = None

    @property
    def layers(self) -> list:
        """``roots`` and their sublayers, walked once per call (on first use)."""
        if self._layers is None:
            self._layers = walk(self.roots) if self.roots else []
        return self._layers

    def forward_done(self) -> None:
        """Call after the forward ran: lets replay skip generators it did not use."""
        if self.rng is not None:
            self.rng.forward_done()

    def replayed(self) -> _Replay:
        """Recomputation context; see NOTE [ Replay ]."""
        return _Replay(self)


class _Replay:
    __slots__ = ("state", "rng", "amp", "grad", "buffers")

    def __init__(self, state: ForwardState):
        self.state = state

    def __enter__(self) -> None:
        state = self.state
        self.rng = self.buffers = None
        self.amp = False
        self.grad = grad_enabled()
        try:
            self.buffers = freeze_buffers(state.layers)
            if state.rng is not None:
                self.rng = state.rng.swap_in()
            self.amp = AmpState.swap(state.amp)
            set_grad_enabled(True)
        except BaseException:
            self.__exit__()
            raise

    def __exit__(self, *exc: object) -> None:
        set_grad_enabled(self.grad)
        AmpState.restore(self.amp)
        if self.rng is not None:
            self.rng.apply()
        if self.buffers:
            restore_buffers(self.buffers)
