"""Random-number state as a value: capture it, replay it, put it back.

Covered: Paddle's CPU generator and the current accelerator's generators, the fleet
model-parallel ``RNGStatesTracker``, numpy's and Python's global generators, Paddle's
one-shot ``custom_state_manager``, and providers registered with :func:`register_rng_state`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import paddle
from paddle.base import core, framework

from .rawstate import NUMPY, PYRANDOM

__all__ = ["RngState", "register_rng_state", "RngStateHandle"]

_CPU_GEN = core.default_cpu_generator()
_PROVIDERS: dict[str, tuple[Callable[[], Any], Callable[[Any], None]]] = {}


class RngStateHandle:
    """Returned by :func:`register_rng_state`; ``remove()`` or use as a context manager."""

    def __init__(self, name: str):
        self.name = name

    def remove(self) -> None:
        _PROVIDERS.pop(self.name, None)

    def __enter__(self) -> RngStateHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def register_rng_state(
    name: str, get_state: Callable[[], Any], set_state: Callable[[Any], None]
) -> RngStateHandle:
    """Make recompute capture and replay one more random state.

    Composable replacement for Paddle's one-shot ``custom_state_manager``: any number of
    providers, each under its own name.

    Args:
        name: unique key for this provider.
        get_state: returns the current state (called at forward and around recomputation).
        set_state: restores a state returned by ``get_state``.

    Returns:
        A handle whose ``remove()`` unregisters the provider.

    Raises:
        ValueError: ``name`` is already registered.
        TypeError: ``get_state`` or ``set_state`` is not callable.

    Example:
        >>> import paddle_recompute as pr
        >>> box = {"s": 0}
        >>> h = pr.register_rng_state("box", lambda: box["s"], lambda s: box.update(s=s))
        >>> h.remove()
    """
    if not (callable(get_state) and callable(set_state)):
        raise TypeError("register_rng_state: get_state and set_state must be callables")
    if name in _PROVIDERS:
        raise ValueError(
            f"register_rng_state: a provider named {name!r} is already registered; "
            "remove it first or pick another name"
        )
    _PROVIDERS[name] = (get_state, set_state)
    return RngStateHandle(name)


def _load_tracker():
    from paddle.distributed.fleet.layers.mpu.random import get_rng_state_tracker

    return get_rng_state_tracker()


def _load_custom_manager():
    try:
        from paddle.distributed.fleet.recompute.recompute import custom_state_manager
    except ImportError:  # older Paddle without it
        return None
    return custom_state_manager


_TRACKER = _load_tracker()  # a process-wide singleton in Paddle
_CUSTOM_MANAGER = _load_custom_manager()


def _paddle_custom_manager():
    manager = _CUSTOM_MANAGER
    return manager if manager is not None and manager.custom_get_state_func else None


_PLACE_CACHE: list = [None, None]  # (expected place object, its accelerator name or None)


def _accelerator() -> str | None:
    """``paddle.get_device()`` when it is an accelerator, else None; re-read only when the
    expected place object changes (``paddle.set_device`` replaces it)."""
    place = framework._global_expected_place_
    if place is None or place is not _PLACE_CACHE[0]:
        device = paddle.get_device()
        _PLACE_CACHE[:] = [framework._global_expected_place_, None if device == "cpu" else device]
    return _PLACE_CACHE[1]


def _device_get(device: str):
    if device.startswith("gpu"):
        return paddle.get_cuda_rng_state()
    return paddle.get_rng_state(device)


def _device_set(device: str, state) -> None:
    if device.startswith("gpu"):
        paddle.set_cuda_rng_state(state)
    else:
        paddle.set_rng_state(state, device)


class RngState:
    """Snapshot of every random generator recompute replays.

    ``forward_done()`` drops numpy's and Python's states when the forward drew nothing
    from them (a cheap fingerprint check): then the rerun draws nothing either, and replay
    leaves them alone, saving four state copies per recomputation.
    """

    __slots__ = ("cpu", "device", "device_state", "tracker", "np", "py", "custom", "providers")

    @classmethod
    def capture(cls, like: RngState | None = None) -> RngState:
        """Snapshot now; with ``like``, only the generators ``like`` holds."""
        self = cls.__new__(cls)
        self.cpu = _CPU_GEN.get_state()
        self.device = device = _accelerator()
        self.device_state = _device_get(device) if device else None
        self.tracker = _TRACKER.get_states_tracker() if _TRACKER.states_ else None
        self.np = NUMPY.snapshot() if like is None or like.np is not None else None
        self.py = PYRANDOM.snapshot() if like is None or like.py is not None else None
        manager = _paddle_custom_manager()
        self.custom = (manager, manager.custom_get_state_func()) if manager else None
        self.providers = {n: get() for n, (get, _) in _PROVIDERS.items()} if _PROVIDERS else None
        return self

    @classmethod
    def capture_generators(cls) -> RngState:
        """Snapshot of Paddle's own generators only (CPU and current device): what an
        operator in ``paddle._C_ops`` can advance.  ``apply`` sets just those."""
        self = cls.__new__(cls)
        self.cpu = _CPU_GEN.get_state()
        self.device = device = _accelerator()
        self.device_state = _device_get(device) if device else None
        self.tracker = self.np = self.py = self.custom = self.providers = None
        return self

    def forward_done(self) -> None:
        """Forget the numpy / Python states if the forward did not touch them."""
        if NUMPY.unchanged_since(self.np):
            self.np = None
        if PYRANDOM.unchanged_since(self.py):
            self.py = None

    def apply(self) -> None:
        """Set every generator this snapshot holds."""
        _CPU_GEN.set_state(self.cpu)
        if self.device:
            _device_set(self.device, self.device_state)
        if self.tracker is not None:
            _TRACKER.set_states_tracker(self.tracker)
        if self.np is not None:
            NUMPY.set(self.np)
        if self.py is not None:
            PYRANDOM.set(self.py)
        if self.custom is not None:
            self.custom[0].custom_set_state_func(self.custom[1])
        if self.providers:
            for name, state in self.providers.items():
                if name in _PROVIDERS:
                    _PROVIDERS[name][1](state)

    def swap_in(self) -> RngState:
        """Apply this snapshot and return the one it replaced (to ``apply`` afterwards)."""
        current = RngState.capture(like=self)
        self.apply()
        return current
