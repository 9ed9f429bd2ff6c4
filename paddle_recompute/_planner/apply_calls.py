"""Forwards for plans over the call tree: one call of a shared layer, runs of a ``Sequential``.

A layer called ``calls`` times per step gets a forward that numbers its calls (modulo
``calls``) and runs call ``k`` as the plan says: through its option's wrap, as its
``Sequential`` children with runs grouped into one region each, or as it was.  A call
made by a region's rerun is not numbered and runs as it was: regions do not overlap, so a
call inside a rerun region was not picked.  Numbering assumes each step calls the layer
``calls`` times, as the profiled step did; a step that does not (a forward that raised
half-way) shifts which calls are regions, never what they compute: any call is exact
recomputed or not.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from .._core.nonreentrant import rerunning

__all__ = ["call_forward"]


def call_forward(layer, original: Callable, choices: list, wrap: Callable) -> Callable:
    """``layer``'s forward under ``choices`` (the plan's choices that target it);
    ``wrap(choice, forward)`` is a choice's region around a forward (its kind's wrap)."""
    per_call: dict = {}
    for c in choices:
        per_call.setdefault(c.call, []).append(c)
    calls = choices[0].calls
    forwards = {k: _forward_of(layer, original, cs, wrap) for k, cs in per_call.items()}
    if None in forwards:  # every call alike
        return forwards[None]
    if len(forwards) == calls and len({id(f) for f in forwards.values()}) == 1:
        return next(iter(forwards.values()))
    count = [0]

    def numbered(*args, **kwargs):
        if rerunning():
            return original(*args, **kwargs)
        k, count[0] = count[0], (count[0] + 1) % calls
        return forwards.get(k, original)(*args, **kwargs)

    return numbered


def _forward_of(layer, original: Callable, choices: list, wrap: Callable) -> Callable:
    whole = [c for c in choices if c.span is None]
    if whole:
        return wrap(whole[0], original)
    subs = [s for s in layer._sub_layers.values() if s is not None]
    starts = {c.span[0]: (c.span[1], c) for c in choices}

    def runs(x):
        i = 0
        while i < len(subs):
            if i in starts:
                end, choice = starts[i]
                x = wrap(choice, functools.partial(_chain, tuple(subs[i:end])))(x)
                i = end
            else:
                x = subs[i](x)
                i += 1
        return x

    return runs


def _chain(layers: tuple, x):
    for layer in layers:
        x = layer(x)
    return x
