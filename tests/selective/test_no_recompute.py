"""``no_recompute``: a call inside a non-reentrant region is kept and not run again."""

import gc

import numpy as np
import paddle
import pytest
from _rc_helpers import Counting, assert_matches_plain, requires_grad
from paddle import nn
from paddle.base import core

from paddle_recompute import RecomputeError, no_recompute, policies, recompute
from paddle_recompute._core import hooks as _hooks


class Block(nn.Layer):
    """Dropout before, inside and after the kept call: the replayed RNG must line up."""

    def __init__(self, p=0.3):
        super().__init__()
        self.pre = nn.Sequential(nn.Linear(8, 8), nn.Dropout(p))
        self.kept = Counting(nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Dropout(p), nn.Linear(16, 8)))
        self.post = Counting(nn.Sequential(nn.Tanh(), nn.Dropout(p), nn.Linear(8, 8)))

    def forward(self, x, *, twice=False):
        h = no_recompute(self.kept, self.pre(x))
        if twice:
            h = no_recompute(self.kept, h)
        return self.post(h)


def make(twice=False):
    def build():
        block = Block()
        x = requires_grad(paddle.randn([4, 8]))
        return block, (x,), {"twice": twice}, [x, *block.parameters()]
    return build


@pytest.mark.parametrize("policy", [None, policies.save_matmuls], ids=["plain", "policy"])
@pytest.mark.parametrize("twice", [False, True])
def test_parity_with_dropout_inside_and_after(twice, policy):
    assert_matches_plain(make(twice), use_reentrant=False, policy=policy)


def test_kept_call_runs_once_the_rest_twice():
    block = Block()
    out = recompute(block, requires_grad(paddle.randn([4, 8])), use_reentrant=False)
    assert (block.kept.calls, block.post.calls) == (1, 1)
    out.sum().backward()
    assert (block.kept.calls, block.post.calls) == (1, 2)


def test_outside_a_region_it_just_calls():
    layer = Counting(nn.Linear(3, 3))
    x = paddle.randn([2, 3])
    np.testing.assert_array_equal(no_recompute(layer, x).numpy(), layer.inner(x).numpy())
    assert layer.calls == 1


def test_in_a_reentrant_region_it_just_calls():
    block = Block()
    out = recompute(block, requires_grad(paddle.randn([4, 8])), use_reentrant=True)
    out.sum().backward()
    assert block.kept.calls == 2  # the reentrant rerun has no frame to replay from


def test_non_tensor_outputs_are_replayed():
    def build():
        lin = nn.Linear(4, 4)

        def f(x):
            y, tag = no_recompute(lambda t: (paddle.tanh(lin(t)), "kept"), x)
            assert tag == "kept"
            return y * 2

        x = requires_grad(paddle.randn([2, 4]))
        return f, (x,), {}, [x, *lin.parameters()]

    assert_matches_plain(build, use_reentrant=False)


def _allocated():
    return core.host_memory_stat_current_value("Allocated", 0)


def test_kept_call_holds_its_activations():
    def held(wrap):
        model = nn.Sequential(*[m for _ in range(4) for m in (nn.Linear(128, 128), nn.Tanh())])
        x = requires_grad(paddle.randn([64, 128]))
        gc.collect()
        gc.disable()
        try:
            before = _allocated()
            out = recompute(lambda t: wrap(model, t), x, use_reentrant=False)
            held = _allocated() - before
        finally:
            gc.enable()
        out.sum().backward()
        return held

    recomputed = held(lambda m, t: m(t))
    kept = held(lambda m, t: no_recompute(m, t))
    activation = 64 * 128 * 4
    assert recomputed <= 2 * activation
    assert kept >= recomputed + 3 * activation  # tanh outputs (and the kept output) held


def test_more_calls_in_recomputation_raise():
    flag = {"rerun": False}
    lin = nn.Linear(4, 4)

    def f(x):
        if flag["rerun"]:
            x = no_recompute(lin, x)
        flag["rerun"] = True
        return paddle.tanh(no_recompute(lin, x))

    out = recompute(f, requires_grad(paddle.randn([2, 4])), use_reentrant=False, determinism_check="none")
    with pytest.raises((RecomputeError, OSError, RuntimeError), match="more no_recompute calls"):
        out.sum().backward()
    paddle.set_grad_enabled(True)
    assert not _hooks.active_frames()


def test_function_must_be_callable():
    with pytest.raises(TypeError, match="must be callable"):
        no_recompute(3, paddle.ones([1]))


def test_numpy_and_python_generators_left_alone():
    """Replaying the state after the kept call must not rewind generators the forward never used."""
    import random

    def run(region):
        block = Block()
        x = requires_grad(paddle.randn([4, 8]))
        np.random.seed(3)
        random.seed(3)
        out = recompute(block, x, use_reentrant=False) if region else block(x)
        drawn = [np.random.rand(), random.random()]  # between forward and backward
        out.sum().backward()
        return drawn + [np.random.rand(), random.random()]

    assert run(True) == run(False)
