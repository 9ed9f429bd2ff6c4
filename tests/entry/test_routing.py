"""``route_forward``: the one way a layer's forward is routed through recompute, undone by
its handle (``_entry/routing.py``)."""

from __future__ import annotations

import numpy as np
import paddle
from paddle import nn

from paddle_recompute._entry.routing import Routing, route_forward


class Counted(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.calls = 0

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
