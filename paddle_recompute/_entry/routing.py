"""Route a layer's ``forward`` through recompute on one instance, and undo it.

Presets, plans, calibration, the profiler, the benchmark models and the testing kit all do
this one way: :func:`route_forward` swaps the instance's ``forward`` (NOTE [ Instance
forwards ] in ``_core/forwards.py``) and returns a :class:`Routing`, the handle that puts
the previous one back.  Forward hooks registered on the layer still run once, outside the
region.  (MindSpore's ``Cell.recompute`` makes the whole call, hooks included, the region,
so ``mindspore/_layer_optin.py`` swaps the class instead: see its docstring.)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from paddle import nn

from .._core.forwards import restore_forward, swap_forward
from .recompute import recompute

__all__ = ["route_forward", "recomputed_forward", "Routing"]


def recomputed_forward(forward: Callable, **options: Any) -> Callable:
    """``forward`` as a recompute region: ``recompute(forward, *args, **options, **kwargs)``."""

    @functools.wraps(forward, updated=())  # never copy a bound method's function attributes
    def recomputed(*args: Any, **kwargs: Any) -> Any:
        return recompute(forward, *args, **options, **kwargs)

    return recomputed


class Routing:
    """Undo handle of :func:`route_forward`; also a context manager that undoes on exit."""

    __slots__ = ("layer", "forward", "previous")

    def __init__(self, layer: nn.Layer, forward: Callable, previous: Callable | None):
        self.layer = layer
        self.forward = forward  # the routed forward now on the instance
        self.previous = previous  # the instance forward it replaced, None for the class's

    def remove(self) -> None:
        """Put the previous forward back (idempotent)."""
        if self.layer is not None:
            restore_forward(self.layer, self.previous)
            self.layer = None

    def __enter__(self) -> Routing:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def route_forward(layer: nn.Layer, wrap: Callable | None = None, /, **options: Any) -> Routing:
    """Make ``layer``'s calls run its forward through recompute, on this instance only.

    Args:
        layer: the layer to route.
        wrap: ``wrap(forward) -> forward`` (a planner option kind's, the profiler's, a
            benchmark runner's); by default :func:`recomputed_forward` with ``options``.
            Positional only, so ``options`` may hold any name.
        **options: options of :func:`~paddle_recompute.recompute`.

    Returns:
        A :class:`Routing`; ``remove()`` puts the previous forward back.
    """
    forward = layer.forward  # the bound method: recompute sees the layer behind it
    routed = recomputed_forward(forward, **options) if wrap is None else wrap(forward)
    return Routing(layer, routed, swap_forward(layer, routed))
