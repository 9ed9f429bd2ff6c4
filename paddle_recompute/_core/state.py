"""Everything recomputation must replay, captured at forward as one value.

NOTE [ Replay ]: recomputation runs the function again with (1) the random states of the
forward (if ``preserve_rng_state``), (2) the forward's autocast settings, (3) grad enabled,
and (4) the layers' state as the forward found it, whatever the forward wrote (BatchNorm's
running statistics, spectral norm's power iteration, a call counter), so it moves once per
step and the rerun computes what the forward did (NOTE [ Forward writes ] in ``written.py``).
Everything is put back in ``__exit__``, so an exception in the recomputed function leaves
RNG, AMP, grad mode and layer state as they were.  (A class, not ``ExitStack`` plus
generator context managers: this runs once per recomputed region and the difference is
~25 µs a call.)
"""

from __future__ import annotations

from .amp import AmpState, grad_enabled, set_grad_enabled
from .layers import walk
from .rng import RngState
from .written import Sandbox
from .written import watch as _watch

__all__ = ["ForwardState"]


class ForwardState:
    """RNG (optional) and AMP state of a forward call, plus the layers it runs.

    With ``watch``, built just before the forward, it marks the layers' state and
    :meth:`forward_done` keeps what the forward wrote; replays then start from the state
    before the forward.  Without, a replay runs in a sandbox (NOTE [ Forward writes ]).
    """

    __slots__ = ("rng", "amp", "roots", "_layers", "watch")

    def __init__(self, preserve_rng_state: bool, roots: tuple, watch: bool = False):
        self.rng = RngState.capture() if preserve_rng_state else None
        self.amp = AmpState.capture()
        self.roots = roots
        self._layers = None
        self.watch = _watch(self.layers) if watch else None

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
        if self.watch is not None:
            self.watch.done()

    def replayed(self, api: str = "recompute") -> _Replay:
        """Recomputation context; see NOTE [ Replay ].  ``api`` names the caller in errors."""
        return _Replay(self, api)

    def layer_state(self, api: str):
        """The context that gives a replay the layers' state (NOTE [ Forward writes ])."""
        if self.watch is None or self.watch.written is None:
            return Sandbox(self.layers)
        return self.watch.rewound(api)


class _Replay:
    __slots__ = ("state", "api", "rng", "amp", "grad", "buffers")

    def __init__(self, state: ForwardState, api: str):
        self.state = state
        self.api = api

    def __enter__(self) -> None:
        state = self.state
        self.rng = self.buffers = None
        self.amp = False
        self.grad = grad_enabled()
        try:
            buffers = state.layer_state(self.api)
            buffers.__enter__()
            self.buffers = buffers
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
        if self.buffers is not None:
            self.buffers.__exit__()
