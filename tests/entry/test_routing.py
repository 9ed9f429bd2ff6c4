"""``route_forward``: the one way a layer's forward is routed through recompute, undone by
its handle (``_entry/routing.py``)."""

from __future__ import annotations

import itertools

import numpy as np
import paddle
import pytest
from _rc_helpers import RunCount
from paddle import nn

from paddle_recompute._entry.routing import Routing, route_forward, route_forwards, routings_of


class Counted(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    calls = RunCount()  # forward runs, reruns included

    def forward(self, x, *, scale=1.0):
        self.calls += 1
        return paddle.tanh(self.fc(x)) * scale


def _input():
    x = paddle.randn([2, 4])
    x.stop_gradient = False
    return x


def test_routed_forward_recomputes_and_the_handle_undoes_it():
    layer = Counted()
    x = _input()
    expected = paddle.grad(layer(x, scale=2.0).sum(), [x])[0].numpy()
    routing = route_forward(layer, use_reentrant=False)
    assert isinstance(routing, Routing) and layer.forward is routing.forward
    layer.calls = 0
    got = paddle.grad(layer(x, scale=2.0).sum(), [x])[0].numpy()
    assert layer.calls == 2  # forward, then the rerun in backward
    np.testing.assert_array_equal(got, expected)
    routing.remove()
    routing.remove()  # idempotent
    assert "forward" not in vars(layer)
    layer.calls = 0
    paddle.grad(layer(x).sum(), [x])
    assert layer.calls == 1


def test_routings_stack_and_a_wrap_replaces_recompute():
    layer = Counted()
    seen = []

    def wrap(forward):
        def traced(*args, **kwargs):
            seen.append(len(args))
            return forward(*args, **kwargs)
        return traced

    inner = route_forward(layer, use_reentrant=False)
    with route_forward(layer, wrap) as outer:
        assert layer.forward is outer.forward and outer.previous is inner.forward
        layer(_input())
        assert seen == [1]
    assert layer.forward is inner.forward  # the context put the routing before it back
    inner.remove()
    assert "forward" not in vars(layer)


def test_options_may_use_any_name_and_the_signature_is_the_forwards():
    import inspect

    layer = Counted()
    with route_forward(layer, preserve_rng_state=False, use_reentrant=False):
        assert list(inspect.signature(layer.forward).parameters) == ["x", "scale"]
        assert layer.forward.__name__ == "forward"


# --------------------------------------------------------------------------- Applied


def _grad_and_calls(layer, x):
    layer.calls = 0
    grad = paddle.grad(layer(x).sum(), [x])[0].numpy()
    return grad, layer.calls


def test_applied_is_public_and_undoes_on_exit_once():
    import paddle_recompute as pr

    layer = Counted()
    x = _input()
    expected, calls = _grad_and_calls(layer, x)
    assert calls == 1
    with pr.planner.Applied([route_forward(layer, use_reentrant=False)]) as handle:
        assert handle.layers == [layer]
        got, calls = _grad_and_calls(layer, x)
        assert calls == 2  # the rerun in backward proves the routing ran
        np.testing.assert_array_equal(got, expected)
    assert "forward" not in vars(layer) and handle.layers == []
    handle.remove()  # idempotent
    assert _grad_and_calls(layer, x)[1] == 1


def _tracing(seen, label):
    def wrap(forward):
        def traced(*args, **kwargs):
            seen.append(label)
            return forward(*args, **kwargs)
        return traced
    return wrap


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_nested_handles_removed_in_any_order_leave_the_rest_and_then_the_original(order):
    layer, other = Counted(), Counted()
    x = _input()
    original = layer.forward
    seen: list = []
    handles = [route_forwards([(layer, _tracing(seen, k)), (other, _tracing(seen, f"o{k}"))])
               for k in range(3)]
    for step, k in enumerate(order):
        handles[k].remove()
        live = sorted(set(range(3)) - set(order[:step + 1]))
        seen.clear()
        layer(x)
        assert seen == live[::-1]  # the newest routing outermost, each still once
        seen.clear()
        other(x)
        assert seen == [f"o{j}" for j in live[::-1]]
    assert "forward" not in vars(layer) and "forward" not in vars(other)
    assert layer.forward == original and routings_of(layer) == []
    np.testing.assert_array_equal(layer(x).numpy(), Counted.forward(layer, x).numpy())


def test_removing_an_older_routing_keeps_a_newer_recompute_region():
    layer = Counted()
    x = _input()
    expected, _ = _grad_and_calls(layer, x)
    seen: list = []
    older = route_forward(layer, _tracing(seen, "older"))
    newer = route_forward(layer, use_reentrant=False)
    older.remove()
    got, calls = _grad_and_calls(layer, x)
    assert calls == 2 and seen == []  # recomputed by the newer routing; the older is gone
    np.testing.assert_array_equal(got, expected)
    assert newer.previous is None and routings_of(layer) == [newer]
    newer.remove()
    assert "forward" not in vars(layer) and routings_of(layer) == []
