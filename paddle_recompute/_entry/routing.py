"""Route a layer's ``forward`` through recompute on one instance, and undo it.

Presets, plans, calibration, the profiler, the benchmark models and the testing kit all do
this one way: :func:`route_forward` swaps the instance's ``forward`` (NOTE [ Instance
forwards ] in ``_core/forwards.py``) and returns a :class:`Routing`, the handle that puts
the previous one back; groups of them make an :class:`Applied`, the public undo handle.
Forward hooks registered on the layer still run once, outside the region.  (MindSpore's
``Cell.recompute`` makes the whole call, hooks included, the region, so
``mindspore/_layer_optin.py`` swaps the class instead: see its docstring.)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from paddle import nn

from .._core.forwards import restore_forward, swap_forward
from .recompute import recompute

__all__ = ["route_forward", "route_forwards", "recomputed_forward", "routings_of", "Routing", "Applied"]

_STACK = "_paddle_recompute_routings"  # the routings in place on a layer, oldest first


def recomputed_forward(forward: Callable, **options: Any) -> Callable:
    """``forward`` as a recompute region: ``recompute(forward, *args, **options, **kwargs)``."""

    @functools.wraps(forward, updated=())  # never copy a bound method's function attributes
    def recomputed(*args: Any, **kwargs: Any) -> Any:
        return recompute(forward, *args, **options, **kwargs)

    return recomputed


class Routing:
    """Undo handle of :func:`route_forward` (one layer); also a context manager that undoes
    on exit.  Several groups of them make an :class:`Applied`.

    NOTE [ Routing stacks ]: a layer routed twice holds both routings in order, the newer
    wrapping the older (``previous``).  Removing the newest puts ``previous`` back.  Removing
    an older one first re-wraps each newer routing, with its own ``wrap``, over what the
    removed one had replaced, so any order of removal ends at the original forward and
    leaves exactly the routings still in place.
    """

    __slots__ = ("layer", "wrap", "forward", "previous", "owner")

    def __init__(self, layer: nn.Layer, wrap: Callable, forward: Callable,
                 previous: Callable | None, owner: object = None):
        self.layer = layer
        self.wrap = wrap  # wrap(forward) -> the routed forward
        self.forward = forward  # the routed forward now on the instance
        self.previous = previous  # the instance forward it replaced, None for the class's
        self.owner = owner  # who routed it (a plan marks its routings), or None

    def remove(self) -> None:
        """Put the previous forward back (idempotent); see NOTE [ Routing stacks ]."""
        layer, self.layer = self.layer, None
        if layer is None:
            return
        stack = routings_of(layer)
        index = next((i for i, r in enumerate(stack) if r is self), len(stack))
        newer = stack[index + 1:]
        del stack[index:]
        restore_forward(layer, self.previous)
        for routing in newer:  # an older routing left first: the newer ones re-wrap
            routing.forward = routing.wrap(layer.forward)
            routing.previous = swap_forward(layer, routing.forward)
            stack.append(routing)
        if not stack and _STACK in layer.__dict__:
            object.__delattr__(layer, _STACK)

    def __enter__(self) -> Routing:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class Applied:
    """Undo handle of recompute applied to a model: presets, plans, ``recompute_sublayers``
    and the planner's measurements all return one.

    ``remove()`` puts back every forward it routed, newest first, and is idempotent; the
    handle is also a context manager that removes on exit.  Handles may be removed in any
    order (NOTE [ Routing stacks ]).

    Example:
        >>> import paddle, paddle_recompute as pr
        >>> layer = paddle.nn.TransformerEncoderLayer(16, 2, 32)
        >>> x = paddle.randn([2, 5, 16]); x.stop_gradient = False
        >>> with pr.apply_recompute_granularity(layer, "core_attn"):
        ...     layer(x).sum().backward()
        >>> "forward" in vars(layer.self_attn)
        False
    """

    def __init__(self, routings: Iterable[Routing] = ()):
        self.routings = list(routings)  # in the order they were applied

    def remove(self) -> None:
        """Restore the forwards this handle routed, newest first (idempotent)."""
        routings, self.routings = self.routings, []
        for routing in reversed(routings):
            routing.remove()

    @property
    def layers(self) -> list:
        """The layers still routed by this handle, in the order they were routed."""
        return [r.layer for r in self.routings if r.layer is not None]

    def __enter__(self) -> Applied:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self.layers)} layers routed)"


def routings_of(layer: nn.Layer) -> list:
    """The routings in place on ``layer``, oldest first (the list itself; empty if none)."""
    return layer.__dict__.get(_STACK, [])


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
    if wrap is None:
        wrap = functools.partial(recomputed_forward, **options)
    forward = layer.forward  # the bound method: recompute sees the layer behind it
    routed = wrap(forward)
    routing = Routing(layer, wrap, routed, swap_forward(layer, routed))
    if _STACK not in layer.__dict__:
        object.__setattr__(layer, _STACK, [])
    layer.__dict__[_STACK].append(routing)
    return routing


def route_forwards(swaps: Iterable[tuple[nn.Layer, Callable]]) -> Applied:
    """Route each ``layer`` of the ``(layer, wrap)`` pairs through its ``wrap``, in order;
    one :class:`Applied` undoes them all."""
    return Applied(route_forward(layer, wrap) for layer, wrap in swaps)
