"""Per-region cost, counted in calls rather than time: how often one recompute region (its
forward, backward and rerun) calls the expensive Paddle and ctypes functions.  Timing is the
benchmark's job (``benchmarks/overhead.py``); these counts catch a regression on any machine.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes

import paddle
import pytest

from paddle_recompute import recompute
from paddle_recompute._core import rng as _rng

REGIONS = 20


class _CountingGenerator:
    def __init__(self, generator, counts):
        self.generator, self.counts = generator, counts

    def get_state(self):
        self.counts["generator.get_state"] += 1
        return self.generator.get_state()

    def set_state(self, state):
        self.counts["generator.set_state"] += 1
        return self.generator.set_state(state)


@contextlib.contextmanager
def counting(monkeypatch):
    counts: collections.Counter = collections.Counter()

    def counted(name, fn):
        def run(*args, **kwargs):
            counts[name] += 1
            return fn(*args, **kwargs)
        return run

    monkeypatch.setattr(_rng, "_CPU_GEN", _CountingGenerator(_rng._CPU_GEN, counts))
    for module, name in ((paddle, "get_device"), (paddle, "get_flags"), (paddle.base.framework, "get_flags"),
                         (paddle, "get_rng_state"), (paddle.autograd, "backward"), (ctypes, "string_at"),
                         (paddle.base.core.eager, "register_saved_tensors_hooks")):
        monkeypatch.setattr(module, name, counted(f"{module.__name__}.{name}", getattr(module, name)))
    yield counts


def _regions(use_reentrant):
    w = paddle.randn([8, 8])
    w.stop_gradient = False
    x = paddle.randn([4, 8])
    x.stop_gradient = False
    h = x
    for _ in range(REGIONS):
        h = recompute(lambda t: paddle.tanh(paddle.matmul(t, w)), h, use_reentrant=use_reentrant)
    return h


# calls per region (forward + backward + rerun), default options
EXPECTED = {
    True: {"generator.get_state": 2, "generator.set_state": 2, "ctypes.string_at": 6},
    False: {"generator.get_state": 2, "generator.set_state": 2, "ctypes.string_at": 6,
            "paddle.base.libpaddle.eager.register_saved_tensors_hooks": 2},
}


@pytest.mark.parametrize("use_reentrant", [True, False], ids=["reentrant", "non_reentrant"])
def test_calls_per_region(monkeypatch, use_reentrant):
    _regions(use_reentrant).sum().backward()  # warm: caches filled once per process
    with counting(monkeypatch) as counts:
        _regions(use_reentrant).sum().backward()
    per_region = {name: n / REGIONS for name, n in counts.items() if n}
    assert per_region == EXPECTED[use_reentrant]
