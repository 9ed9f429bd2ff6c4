"""Global seed and the private random streams of seeded primitives.

``ops.Dropout(Seed0, Seed1)`` with a non-zero seed draws from its own stream (two instances
with the same seeds give the same masks, independent of the global generator). Those streams
are registered with :func:`paddle_recompute.register_rng_state`, so every recomputation
replays them and a recomputed mask always equals the forward mask.
"""

from __future__ import annotations

import random
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import paddle
from paddle.base import core

from paddle_recompute import register_rng_state

from .dataset import config as dataset_config

__all__ = ["set_seed", "get_seed", "SeededStream"]

_GLOBAL_SEED: list[int | None] = [None]
_STREAMS: weakref.WeakSet = weakref.WeakSet()
_PROVIDER = "paddle_mindspore.seeded_streams"
_registered = [False]


def set_seed(seed: int) -> None:
    """``mindspore.set_seed``: seed Paddle's generators, numpy's, Python's and, as MindSpore does,
    the dataset pipeline's (``mindspore.dataset.config.set_seed``)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"The argument 'seed' must be a non-negative integer, but got {seed!r}.")
    _GLOBAL_SEED[0] = seed
    paddle.seed(seed)
    np.random.seed(seed)
    random.seed(seed)
    dataset_config.set_seed(seed)


def get_seed() -> int | None:
    """``mindspore.get_seed``: the last seed given to :func:`set_seed` (None if never set)."""
    return _GLOBAL_SEED[0]


def _device_state() -> list:
    return [core.default_cpu_generator().get_state(), paddle.get_rng_state()]


def _set_device_state(state: list) -> None:
    core.default_cpu_generator().set_state(state[0])
    paddle.set_rng_state(state[1])


class SeededStream:
    """A private Paddle random state, swapped in around each draw of its owner."""

    __slots__ = ("state", "__weakref__")

    def __init__(self, seed: int):
        outer = _device_state()
        try:
            paddle.seed(seed)
            self.state = _device_state()
        finally:
            _set_device_state(outer)
        _STREAMS.add(self)
        _ensure_registered()

    @contextmanager
    def active(self) -> Iterator[None]:
        """Draw from this stream inside the body; the global stream is left untouched."""
        outer = _device_state()
        _set_device_state(self.state)
        try:
            yield
        finally:
            self.state = _device_state()
            _set_device_state(outer)


def _snapshot() -> dict:
    return {stream: stream.state for stream in list(_STREAMS)}


def _restore(snapshot: dict[Any, list]) -> None:
    for stream, state in snapshot.items():
        stream.state = state


def _ensure_registered() -> None:
    if not _registered[0]:
        register_rng_state(_PROVIDER, _snapshot, _restore)
        _registered[0] = True
