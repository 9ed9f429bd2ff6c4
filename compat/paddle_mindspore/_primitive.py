"""``ops.Primitive``: an operator object, with MindSpore's ``recompute(mode=True)``.

Subclasses define ``setup`` (the constructor arguments, bound like MindSpore binds them) and
``compute`` (the Paddle computation). A primitive marked with ``recompute()`` has its
outputs recomputed in backward instead of stored, see NOTE [ Recipes ] in ``_recipes.py``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from . import _recipes
from ._one_device import note_prim_attr
from ._replay import Snapshot
from ._shard import record_strategy
from ._validate import bind, check_bool

__all__ = ["Primitive"]


class Primitive:
    """Base class of the ``ops`` operator classes.

    Example:
        >>> from paddle_mindspore import ops
        >>> relu = ops.ReLU().recompute()
    """

    random: ClassVar[bool] = False  # draws random numbers: recipes replay the RNG

    def __init__(self, *args: Any, **kwargs: Any):
        self.name = type(self).__name__
        self.attrs: dict[str, Any] = {}
        self._recompute = False
        bound = bind(self.setup, args, kwargs)
        self.setup(*bound.args, **bound.kwargs)

    def setup(self) -> None:
        """Store the constructor arguments (override with the real signature)."""

    def compute(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{self.name}.compute")

    def add_prim_attr(self, name: str, value: Any) -> Primitive:
        """Set an attribute; a ``recompute_comm_op`` mark is recorded and, having no
        communication to act on on one device, said once (NOTE [ Options for several devices ])."""
        note_prim_attr(name, value)
        self.attrs[name] = value
        return self

    def recompute(self, mode: bool = True) -> Primitive:
        """Recompute this operator's output in backward instead of storing it.

        MindSpore honours this in graph mode only; here it takes effect inside a Cell's
        forward or a grad function, on a primitive that is called (``nn.Dropout``'s own
        primitive is not: its mark does nothing, as in PyNative). Returns ``self``.

        Raises:
            TypeError: ``mode`` is not a bool (MindSpore's text).
        """
        check_bool(mode)
        self._recompute = mode
        self.add_prim_attr("recompute", mode)
        if mode:
            _recipes.enable()
        return self

    def shard(self, in_strategy: tuple | None = None, out_strategy: tuple | None = None) -> Primitive:
        """``Primitive.shard``: records the sharding strategy (``in_strategy`` / ``out_strategy``
        attrs, or ``in_layout`` / ``out_layout`` for :class:`Layout` strategies) and returns
        ``self``, as MindSpore does; the strategy splits work across devices in (semi-)auto
        parallel mode only, so on one device the arithmetic is unchanged.

        Raises:
            TypeError / ValueError: a malformed strategy (MindSpore's checks and texts).
        """
        return record_strategy(self, in_strategy, out_strategy)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not (self._recompute and _recipes.tracking()):
            return self.compute(*args, **kwargs)
        snapshot = Snapshot(self.random)
        out = self.compute(*args, **kwargs)
        _recipes.register_outputs(out, self.compute, args, kwargs, snapshot)
        return out

    def __repr__(self) -> str:
        attrs = ", ".join(f"{k}={v}" for k, v in self.attrs.items())
        return f"Prim[{self.name}]<{attrs}>" if attrs else f"Prim[{self.name}]"
