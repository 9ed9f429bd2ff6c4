"""Recompute regions with MindSpore's options, on top of :func:`paddle_recompute.recompute`.

- ``use_reentrant=True``: the core's reentrant region (a PyLayer; the function must be a Cell
  or Layer call, so parameter gradients come back through Paddle's engine).
- ``use_reentrant=False``: the core's non-reentrant region, wrapped in a :class:`_RegionCall`
  that adds ``context_fn`` (forward context on the first run, recompute context on reruns)
  and the merge of ``output_recompute``: a tensor argument that is a registered recomputable
  output (see NOTE [ Recipes ]) is not handed to the core, which would keep it alive; the
  region gets it from its recipe when it reruns.
- ``output_recompute=True`` (always non-reentrant, as in MindSpore): the region's outputs are
  registered as recomputable (rerun the region from its inputs), so consumers saving them in a
  recipe scope and an adjacent non-reentrant region keep a recipe instead of the tensor.
RNG state is always preserved (MindSpore's default ``save_rng_state=True``).

NOTE [ Block keyword arguments ]: the block's keyword arguments reach the core as one trailing
positional ``dict`` (the core flattens dicts, so tensors in it are region inputs like any
other), never as keywords: a block keyword named like an option of
:func:`paddle_recompute.recompute` (``debug``, ``early_stop``, ``offload_indices``, ...) would
otherwise be taken for that option. The region callables unpack it again.

NOTE [ Nested reentrant regions ]: a reentrant region met while an enclosing reentrant region
is being recomputed runs as a plain call.  That rerun's graph only lives for the enclosing
region's backward, so this changes no result, only the peak inside that backward; and it
avoids a paddle-recompute limitation: a reentrant region nested in a reentrant region, under
``paddle.grad`` (which the grad transforms use where a lean backward cannot serve), gives the
inner parameters no gradient.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import paddle

from paddle_recompute import recompute as _core_recompute
from paddle_recompute.extend import grad_enabled

from . import _recipes
from ._replay import Snapshot

__all__ = ["RecomputeConfig", "run_region"]


@dataclass(frozen=True)
class RecomputeConfig:
    """Validated options of ``Cell.recompute`` / ``mindspore.recompute``."""

    use_reentrant: bool = True
    output_recompute: bool = False
    early_stop: bool = True
    context_fn: Callable[[], tuple[Any, Any]] | None = None
    options: Mapping[str, bool] = field(default_factory=dict)


class _Reruns:
    """How many reentrant regions of this layer are being recomputed right now."""

    depth = 0


class _ReentrantCall:
    """The callable a reentrant region runs; counts its reruns (see NOTE [ Nested reentrant regions ])."""

    __slots__ = ("function", "_recompute_roots")

    def __init__(self, function: Callable[..., Any], roots: tuple):
        self.function = function
        self._recompute_roots = roots

    def __call__(self, *packed: Any) -> Any:
        *args, kwargs = packed  # see NOTE [ Block keyword arguments ]
        if not grad_enabled():  # the forward
            return self.function(*args, **kwargs)
        _Reruns.depth += 1
        try:
            return self.function(*args, **kwargs)
        finally:
            _Reruns.depth -= 1


class _Slot:
    """A tensor argument taken from a recipe instead of being kept by the region."""

    __slots__ = ("position", "recipe", "stop_gradient")

    def __init__(self, position: int, recipe: _recipes.Recipe, tensor: paddle.Tensor):
        self.position = position
        self.recipe = recipe
        self.stop_gradient = tensor.stop_gradient
        recipe.acquire()

    def rerun_value(self) -> paddle.Tensor:
        value = self.recipe.take().detach()
        value.stop_gradient = self.stop_gradient
        return value


class _RegionCall:
    """The callable a non-reentrant region runs: restores deferred arguments and contexts."""

    __slots__ = ("function", "_recompute_roots", "slots", "live", "contexts", "runs")

    def __init__(self, function: Callable[..., Any], roots: tuple, context_fn: Callable | None):
        self.function = function
        self._recompute_roots = roots
        self.slots: list[_Slot] = []
        self.live: dict[int, paddle.Tensor] | None = {}
        self.contexts = _contexts(context_fn)
        self.runs = 0

    def defer(self, args: tuple) -> tuple:
        """Take registered outputs out of ``args``; returns the arguments the core keeps."""
        kept = []
        for i, arg in enumerate(args):
            recipe = _recipes.lookup(arg) if isinstance(arg, paddle.Tensor) else None
            if recipe is None:
                kept.append(arg)
            else:
                self.slots.append(_Slot(i, recipe, arg))
                self.live[i] = arg
        return tuple(kept)

    def __call__(self, *packed: Any) -> Any:
        *args, kwargs = packed  # see NOTE [ Block keyword arguments ]
        first = self.runs == 0
        self.runs += 1
        full = self._arguments(tuple(args), first)
        if first:
            self.live = None  # the forward has them; the region must not keep them
        context = self.contexts[0 if first else 1] if self.contexts else None
        if context is None:
            return self.function(*full, **kwargs)
        with context:
            return self.function(*full, **kwargs)

    def _arguments(self, args: tuple, first: bool) -> list:
        if not self.slots:
            return list(args)
        full = list(args)
        for slot in self.slots:
            value = self.live[slot.position] if first else slot.rerun_value()
            full.insert(slot.position, value)
        return full


def _contexts(context_fn: Callable | None) -> tuple | None:
    if context_fn is None:
        return None
    pair = context_fn()
    if not (isinstance(pair, tuple) and len(pair) == 2
            and all(hasattr(c, "__enter__") and hasattr(c, "__exit__") for c in pair)):
        raise TypeError("context_fn must return a tuple of two context managers "
                        f"(forward context, recompute context), but returned {pair!r}.")
    return pair


def run_region(function: Callable[..., Any], args: tuple, kwargs: dict, config: RecomputeConfig,
               roots: tuple) -> Any:
    """Run ``function(*args, **kwargs)`` as a recompute region configured by ``config``."""
    snapshot = Snapshot(True, roots) if config.output_recompute and _recipes.tracking() else None
    if config.use_reentrant:
        if _Reruns.depth:
            return function(*args, **kwargs)
        out = _core_recompute(_ReentrantCall(function, roots), *args, dict(kwargs), use_reentrant=True,
                              preserve_rng_state=True)
    else:
        call = _RegionCall(function, roots, config.context_fn)
        kept = call.defer(args) if _recipes.tracking() else args
        out = _core_recompute(call, *kept, dict(kwargs), use_reentrant=False, preserve_rng_state=True,
                              early_stop=config.early_stop)
    if snapshot is not None:
        _recipes.register_outputs(out, function, args, kwargs, snapshot)
    return out
