"""Forwards for plans over the call tree: one call of a shared layer, runs of calls.

A layer called ``calls`` times per step gets a forward that numbers its calls (modulo
``calls``) and runs call ``k`` as the plan says: through its option's wrap, as a member of
a run, as its ``Sequential`` children with runs grouped into one region each (plans saved
before runs had members), or as it was.  A call made by a region's rerun is not numbered
and runs as it was: regions do not overlap, so a call inside a rerun region was not
picked.  Numbering assumes each step calls the layer ``calls`` times, as the profiled step
did; a step that does not (a forward that raised half-way) shifts which calls are regions,
never what they compute: any call is exact recomputed or not.

NOTE [ Runs of calls ]: a run is calls ``c_0 .. c_n`` that the profile saw chained: each
took the output of the one before as its sole argument, with no operator run between them
(``CallProfile.chained``), as a ``Sequential``, a loop over a ``LayerList`` or
``x = self.a(x); x = self.b(x)`` make them.  The caller makes the calls one by one, so the
run cannot wrap them as one function; instead the call ``c_0`` runs the whole run at once,
as one region over the members' own forwards, returning every member's output, and gives
back ``c_0``'s output; each later call ``c_i`` checks it was given ``c_{i-1}``'s output,
untouched, and gives back ``c_i``'s.  Since no operator ran between the calls when
profiled, running them early computes the same values with the same random draws.  A
call given anything else (the forward took another path than the profiled one) raises
``RecomputeError``: its output was already computed from another input.  Forward hooks
of a member run at the caller's call, around what it gives back.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable

from ..._core.errors import RecomputeError
from ..._core.nonreentrant import rerunning

__all__ = ["call_forward", "numbered_forward", "Run"]


class Run:
    """The members of one run (NOTE [ Runs of calls ]): ``layers[i]`` makes call ``i``."""

    def __init__(self, choice, layers: list):
        self.choice, self.layers = choice, layers
        self.forwards: list = [None] * len(layers)  # each member's own forward
        self.local = threading.local()  # .outs: the outputs of the run in progress, .at: next

    def member(self, i: int, original: Callable, wrap: Callable) -> Callable:
        """Call ``i``'s forward (``original``: its layer's own forward)."""
        self.forwards[i] = original
        if i == 0:

            def run(*args, **kwargs):
                return self._all(*args, **kwargs)

            run._recompute_roots = tuple(self.layers)  # whose running statistics the rerun freezes
            region = wrap(self.choice, run)

            def first(*args, **kwargs):
                if rerunning():
                    return original(*args, **kwargs)
                outs = region(*args, **kwargs)
                self.local.outs, self.local.at = outs, 1
                return outs[0]

            return first

        def later(*args, **kwargs):
            if rerunning():
                return original(*args, **kwargs)
            outs, at = getattr(self.local, "outs", None), getattr(self.local, "at", 0)
            self.local.outs = None
            if outs is None or at != i or kwargs or len(args) != 1 or args[0] is not outs[i - 1]:
                raise RecomputeError(
                    f"apply_plan: region {self.choice.block!r} runs calls of "
                    f"{', '.join(dict.fromkeys(self.choice.targets))} as one, each taking the "
                    f"output of the one before, as profiled; this forward called "
                    f"{self.choice.targets[i]!r} with something else. Make the plan again on a "
                    "forward that runs like this one")
            if i + 1 < len(outs):
                self.local.outs, self.local.at = outs, i + 1
            return outs[i]

        return later

    def _all(self, *args, **kwargs):
        x = self.forwards[0](*args, **kwargs)
        outs = [x]
        for forward in self.forwards[1:]:
            x = forward(x)
            outs.append(x)
        return tuple(outs)


def call_forward(layer, original: Callable, choices: list, wrap: Callable,
                 runs: dict | None = None) -> Callable:
    """``layer``'s forward under ``choices`` (the plan's choices that target it);
    ``wrap(choice, forward)`` is a choice's region around a forward (its kind's wrap);
    ``runs``: id of a run's choice -> its :class:`Run`."""
    per_call: dict = {}
    calls = 0
    for c in dict.fromkeys(choices):  # a run lists a layer once per call it makes
        if c.members:
            run = runs[id(c)]
            for i, (k, n) in enumerate(c.members):
                if run.layers[i] is layer:
                    per_call[k] = run.member(i, original, wrap)
                    calls = n
        else:
            per_call.setdefault(c.call, []).append(c)
            calls = c.calls
    forwards = {k: f if callable(f) else _forward_of(layer, original, f, wrap)
                for k, f in per_call.items()}
    if None in forwards:  # every call alike
        return forwards[None]
    if len(forwards) == calls and len({id(f) for f in forwards.values()}) == 1:
        return next(iter(forwards.values()))
    return numbered_forward(original, forwards, calls)


def numbered_forward(original: Callable, forwards: dict, calls: int) -> Callable:
    """A forward that numbers the calls made outside reruns (modulo ``calls``) and runs call
    ``k`` through ``forwards[k]``, the others (and calls made by a rerun) as ``original``."""
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
