"""Recomputation really happens (the function runs again in backward) and really saves memory."""

import gc
import os

import paddle
import pytest
from _rc_helpers import Counting
from paddle import nn
from paddle.base import core

from paddle_recompute import recompute, recompute_sequential
from paddle_recompute.testing import assert_tensors_equal


def mlp(depth=3, width=8):
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.Tanh()]
    return nn.Sequential(*layers)


def leaf(*shape):
    t = paddle.randn(list(shape))
    t.stop_gradient = False
    return t


def test_forward_runs_once_then_again_in_backward(use_reentrant):
    layer = Counting(mlp())
    out = recompute(layer, leaf(4, 8), use_reentrant=use_reentrant)
    assert layer.calls == 1
    out.sum().backward()
    assert layer.calls == 2


def test_plain_call_runs_once():
    layer = Counting(mlp())
    layer(leaf(4, 8)).sum().backward()
    assert layer.calls == 1


def test_no_recomputation_without_backward(use_reentrant):
    layer = Counting(mlp())
    out = recompute(layer, leaf(4, 8), use_reentrant=use_reentrant)
    del out
    assert layer.calls == 1


@pytest.mark.parametrize("early_stop", [True, False])
def test_non_reentrant_recomputes_again_for_each_retained_backward(early_stop):
    layer = Counting(mlp())
    x = leaf(4, 8)
    out = recompute(layer, x, use_reentrant=False, early_stop=early_stop)
    out.sum().backward(retain_graph=True)
    first = x.grad.numpy()
    out.sum().backward()
    assert layer.calls == 3
    assert_tensors_equal(x.grad, 2 * first)


def test_each_nested_region_recomputes():
    inner = Counting(mlp(depth=1))
    outer_body = mlp(depth=1)

    def outer(t):
        return outer_body(recompute(inner, t, use_reentrant=False))

    out = recompute(outer, leaf(4, 8), use_reentrant=False)
    assert inner.calls == 1
    out.sum().backward()
    assert inner.calls >= 2  # rerun by the outer recomputation, then again by its own region


@pytest.mark.parametrize("segments", [1, 2, 3])
def test_recompute_sequential_reruns_every_segment_but_the_last(segments, use_reentrant):
    blocks = [Counting(mlp(depth=1)) for _ in range(3)]
    model = nn.Sequential(*blocks)
    out = recompute_sequential({"segments": segments, "use_reentrant": use_reentrant}, model, leaf(4, 8))
    assert [b.calls for b in blocks] == [1, 1, 1]
    out.sum().backward()
    recomputed = segments - 1  # each of the first segments holds one block here
    assert [b.calls for b in blocks] == [2] * recomputed + [1] * (3 - recomputed)


# --------------------------------------------------------------------------- memory


def _allocated() -> int:
    return core.host_memory_stat_current_value("Allocated", 0)


def _memory_stat_works() -> bool:
    before = _allocated()
    probe = paddle.empty([1024], dtype="float32")
    works = _allocated() - before >= 4096
    del probe
    return works


needs_memory_stat = pytest.mark.skipif(
    not _memory_stat_works(),
    reason="host memory statistics are off (FLAGS_enable_host_memory_stat must be set before "
    f"paddle is imported; it is {os.environ.get('FLAGS_enable_host_memory_stat')!r})",
)

DEPTH, WIDTH, BATCH = 12, 128, 64
OUT_BYTES = BATCH * WIDTH * 4


def _held_after_forward(forward) -> int:
    """Bytes still allocated once ``forward`` returned (its output kept alive).

    The garbage collector is kept from freeing other tests' tensors in between.
    """
    model = mlp(DEPTH, WIDTH)
    x = leaf(BATCH, WIDTH)
    gc.collect()
    gc.disable()
    try:
        before = _allocated()
        out = forward(model, x)
        held = _allocated() - before
    finally:
        gc.enable()
    out.sum().backward()  # the graph is complete and usable
    assert all(p.grad is not None for p in model.parameters())
    return held


@needs_memory_stat
def test_recompute_holds_fewer_bytes_after_forward(use_reentrant):
    plain = _held_after_forward(lambda m, x: m(x))
    recomputed = _held_after_forward(lambda m, x: recompute(m, x, use_reentrant=use_reentrant))
    assert plain >= DEPTH * OUT_BYTES * 0.9  # about one saved activation per layer
    assert recomputed <= 2 * OUT_BYTES  # the output (and at most one more tensor)
    assert recomputed * 4 < plain


@needs_memory_stat
def test_per_block_recompute_holds_block_boundaries_only(use_reentrant):
    def blockwise(model, x):
        layers = list(model.children())
        for i in range(0, len(layers), 4):  # blocks of two Linear+Tanh pairs
            x = recompute(nn.Sequential(*layers[i:i + 4]), x, use_reentrant=use_reentrant)
        return x

    plain = _held_after_forward(lambda m, x: m(x))
    blocks = _held_after_forward(blockwise)
    whole = _held_after_forward(lambda m, x: recompute(m, x, use_reentrant=use_reentrant))
    assert whole < blocks < plain
