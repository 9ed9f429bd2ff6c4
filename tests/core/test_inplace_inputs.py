"""What a rerun reads and was written in place since its forward is refused, as plain Paddle
refuses a backward that reads a saved tensor written since (NOTE [ Rerun inputs ] in
``paddle_recompute/_core/versions.py``)."""

from __future__ import annotations

import numpy as np
import paddle
import pytest
from paddle import nn

from paddle_recompute import RecomputeError, no_recompute, policies, recompute

MODES = {
    "reentrant": {"use_reentrant": True},
    "non_reentrant": {"use_reentrant": False},
    "policy": {"use_reentrant": False, "policy": policies.save_matmuls},
}


@pytest.fixture(params=list(MODES))
def options(request) -> dict:
    return MODES[request.param]


def _block():
    return nn.Sequential(nn.Linear(4, 4), nn.Tanh())


def _leaf(*shape):
    x = paddle.randn(list(shape))
    x.stop_gradient = False
    return x


def test_plain_paddle_refuses_it_too():
    block = _block()
    h = _leaf(2, 4) * 1.0
    y = block(h)
    h.scale_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        (y * h).sum().backward()


def test_input_written_after_the_forward(options):
    block = _block()
    h = _leaf(2, 4) * 1.0
    y = recompute(block, h, **options)
    h.scale_(2.0)
    with pytest.raises(RecomputeError, match=r"argument args\[0\] of Sequential was modified by an inplace"):
        (y * h).sum().backward()


def test_keyword_and_nested_arguments_are_named(options):
    lin = nn.Linear(4, 4)

    def region(pair, *, mask):
        return paddle.tanh(lin(pair[0] + pair[1]) * mask)

    a, b, mask = (_leaf(2, 4) * 1.0 for _ in range(3))
    y = recompute(region, [a, b], mask=mask, **options)
    mask.add_(paddle.ones([2, 4]))
    with pytest.raises(RecomputeError, match=r"argument kwargs\['mask'\] of .*region"):
        y.sum().backward()

    y = recompute(region, [a, b], mask=mask, **options)
    b.scale_(3.0)
    with pytest.raises(RecomputeError, match=r"argument args\[0\]\[1\] of .*region"):
        y.sum().backward()


def test_input_written_by_the_region_itself(options):
    """The rerun would start from the written input: refused, not rerun from it."""
    lin = nn.Linear(4, 4)

    def region(h):
        h.scale_(2.0)
        return paddle.tanh(lin(h))

    y = recompute(region, _leaf(2, 4) * 1.0, **options)
    with pytest.raises(RecomputeError, match=r"argument args\[0\] of .*region"):
        y.sum().backward()


def test_in_place_operators_inside_the_region_keep_working(options):
    lin = nn.Linear(4, 4)
    runs = []

    def region(x):
        runs.append(1)
        h = lin(x)
        h.scale_(2.0)
        h.add_(paddle.ones([2, 4]))
        return paddle.tanh(h) * x

    x = _leaf(2, 4)
    region(x).sum().backward()
    expected = [x.grad.numpy(), lin.weight.grad.numpy(), lin.bias.grad.numpy()]
    x.clear_gradient()
    lin.clear_gradients()
    recompute(region, x, **options).sum().backward()
    assert len(runs) == 3  # plain, forward, rerun
    for got, want in zip([x.grad, lin.weight.grad, lin.bias.grad], expected, strict=True):
        np.testing.assert_array_equal(got.numpy(), want)


def test_no_recompute_output_written_after_the_call():
    lin, lin2 = nn.Linear(4, 4), nn.Linear(4, 4)

    def region(x):
        y = no_recompute(lin, x)
        y.scale_(2.0)
        return paddle.tanh(lin2(y))

    for options in (MODES["non_reentrant"], MODES["policy"]):
        y = recompute(region, _leaf(2, 4), **options)
        with pytest.raises(RecomputeError, match="no_recompute: output 0 of Linear was modified"):
            y.sum().backward()


def test_kept_slot_written_after_the_forward():
    """A region that keeps what it saves (``save_all``) does not rerun; its kept slots are
    checked as plain Paddle checks saved tensors."""
    block = _block()
    h = _leaf(2, 4) * 1.0
    y = recompute(block, h, use_reentrant=False, policy=policies.save_all)
    h.scale_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        (y * h).sum().backward()
