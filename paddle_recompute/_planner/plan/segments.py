"""``segments="auto"`` for ``recompute_sequential``: profile the chain once, cut it optimally.

The chain is run once (grad enabled, random states and stateful buffers put back, so the
real call that follows draws the same numbers) with a counting frame on the saved-tensor
hook stack: per callable, the bytes it saves for backward (NOTE [ Counting saved bytes ]),
the bytes of its output and its time.  ``solve_segments`` then picks the boundaries
(NOTE [ Segment model ]).  The choice is cached per chain (the callables' ids) and input
signature (shapes, dtypes) and budget, so later calls cost nothing extra.
"""

from __future__ import annotations

import time
from collections import OrderedDict

import paddle

from ..._core import hooks, tree
from ..._core.amp import grad_enabled, set_grad_enabled
from ..._core.layers import find_roots
from ..._core.state import ForwardState
from ..harness import sync
from ..profile.counter import Counter, spans
from ..profile.measure import nbytes_of
from ..solvers.segments import Stage, solve_segments
from .make import budget_bytes

__all__ = ["auto_starts", "chain_stages", "clear_cache"]

_CACHE: OrderedDict = OrderedDict()
_CACHE_SIZE = 64
_API = "recompute_sequential"


def clear_cache() -> None:
    """Forget every cached segmentation (e.g. after changing a chain in place)."""
    _CACHE.clear()


def _signature(args, kwargs) -> tuple:
    leaves, spec = tree.flatten((args, kwargs))
    return tuple((tuple(t.shape), str(t.dtype), t.stop_gradient) for t in leaves), repr(spec)


def auto_starts(funcs: list, args: tuple, kwargs: dict, budget) -> tuple[int, ...]:
    """Segment starts for ``funcs`` called on ``args``: least peak with ``budget=None``,
    else least recompute time with a predicted peak within ``budget`` (bytes, or a fraction
    of the chain's activation bytes without recompute).

    Raises:
        InfeasibleBudget: no segmentation fits the budget (the message names the least peak).
    """
    key = (tuple(id(f) for f in funcs), _signature(args, kwargs), budget)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    stages = chain_stages(funcs, args, kwargs)
    budget = None if budget is None else budget_bytes(_API, budget, sum(s.saved for s in stages))
    starts = solve_segments(stages, budget).starts
    _CACHE[key] = starts
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return starts


def chain_stages(funcs: list, args: tuple, kwargs: dict) -> list[Stage]:
    """Per callable: bytes saved for backward, output bytes, seconds (one profiled run)."""
    layers = [f for f in funcs if isinstance(f, paddle.nn.Layer)]
    alive = ([p for layer in layers for p in layer.parameters()]
             + [b for layer in layers for b in layer.buffers()] + tree.flatten((args, kwargs))[0])
    counter = Counter(spans(alive), record=False)
    stages = []
    grad = grad_enabled()
    try:
        set_grad_enabled(True)
        with ForwardState(True, tuple(layers) + find_roots(funcs[0], args, kwargs)).replayed(), \
                hooks.pushed(counter):
            value = None
            for i, f in enumerate(funcs):
                before = counter.total
                sync()
                start = time.perf_counter()
                value = f(*args, **kwargs) if i == 0 else f(value)
                sync()
                stages.append(Stage(counter.total - before, nbytes_of(value),
                                    time.perf_counter() - start))
            del value
    finally:
        set_grad_enabled(grad)
    return stages
