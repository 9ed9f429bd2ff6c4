"""Repeated backward, ``paddle.grad`` and gradients of gradients through recompute regions."""

import numpy as np
import paddle
import pytest
from _rc_helpers import Counting
from paddle import nn

from paddle_recompute import recompute
from paddle_recompute._core import hooks as _hooks


class Model(nn.Layer):
    """Linear -> [region: Linear, tanh, Linear, sigmoid] -> Linear."""

    def __init__(self, mode, width=6):
        super().__init__()
        paddle.seed(5)
        self.first = nn.Linear(width, width)
        self.block = Counting(
            nn.Sequential(nn.Linear(width, width), nn.Tanh(), nn.Linear(width, width), nn.Sigmoid())
        )
        self.last = nn.Linear(width, 3)
        self.mode = mode  # None: no recompute; else use_reentrant

    def forward(self, x):
        h = self.first(x)
        h = self.block(h) if self.mode is None else recompute(self.block, h, use_reentrant=self.mode)
        return self.last(h)


def make_input(width=6, batch=4):
    paddle.seed(9)
    x = paddle.randn([batch, width])
    x.stop_gradient = False
    return x


def loss_of(model, x):
    out = model(x)
    return (out * out).mean()


def grads(model, x):
    return [x.grad.numpy()] + [p.grad.numpy() for p in model.parameters()]


def assert_all_equal(got, expected):
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        np.testing.assert_array_equal(g, e, err_msg=f"entry {i}")


def reference_grads():
    model, x = Model(None), make_input()
    loss_of(model, x).backward()
    return grads(model, x)


# --------------------------------------------------------------------------- repeated backward


def test_non_reentrant_retain_graph_then_backward_accumulates_exactly():
    expected = reference_grads()
    model, x = Model(False), make_input()
    loss = loss_of(model, x)
    assert model.block.calls == 1
    loss.backward(retain_graph=True)
    assert model.block.calls == 2
    assert_all_equal(grads(model, x), expected)
    loss.backward()
    assert model.block.calls == 3  # the second backward recomputes again
    assert_all_equal(grads(model, x), [2 * e for e in expected])  # g + g == 2 * g exactly
    assert not _hooks.active_frames()


def test_non_reentrant_three_backwards_through_one_graph():
    expected = reference_grads()
    model, x = Model(False), make_input()
    loss = loss_of(model, x)
    loss.backward(retain_graph=True)
    loss.backward(retain_graph=True)
    loss.backward()
    assert model.block.calls == 4
    assert_all_equal(grads(model, x), [e + e + e for e in expected])


def test_reentrant_retain_graph_then_backward_raises_clearly_and_next_step_works():
    expected = reference_grads()
    model, x = Model(True), make_input()
    loss = loss_of(model, x)
    loss.backward(retain_graph=True)
    assert_all_equal(grads(model, x), expected)  # the first backward is correct
    # The guard raises RecomputeError before Paddle's PyLayer would crash the process;
    # Paddle's engine re-raises it as OSError carrying the message.
    with pytest.raises((RuntimeError, OSError), match="cannot run backward twice") as info:
        loss.backward()
    assert "use_reentrant=False" in str(info.value)
    assert paddle.is_grad_enabled()
    assert not _hooks.active_frames()

    # The process is fine and a fresh step of the same model matches no recompute.
    model.clear_gradients()
    x2 = make_input()
    loss_of(model, x2).backward()
    assert_all_equal(grads(model, x2), expected)


@pytest.mark.parametrize("use_reentrant", [True, False], ids=["reentrant", "non_reentrant"])
def test_retain_graph_with_a_single_backward_is_plain(use_reentrant):
    expected = reference_grads()
    model, x = Model(use_reentrant), make_input()
    loss_of(model, x).backward(retain_graph=True)
    assert_all_equal(grads(model, x), expected)


# --------------------------------------------------------------------------- paddle.grad


def _param_grad_snapshot(model):
    return [None if p.grad is None else p.grad.numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("use_reentrant", [True, False], ids=["reentrant", "non_reentrant"])
@pytest.mark.parametrize("preexisting_grads", [False, True], ids=["grads_none", "grads_set"])
def test_paddle_grad_wrt_input_and_parameter_leaves_dot_grad_alone(use_reentrant, preexisting_grads):
    ref_model, ref_x = Model(None), make_input()
    ref_dx, ref_dw = paddle.grad(loss_of(ref_model, ref_x), [ref_x, ref_model.block.inner[0].weight])
    ref_dx_only = paddle.grad(loss_of(ref_model, ref_x), ref_x)[0]
    ref_dw_only = paddle.grad(loss_of(ref_model, ref_x), ref_model.block.inner[2].weight)[0]

    model, x = Model(use_reentrant), make_input()
    if preexisting_grads:
        loss_of(model, x).backward()
    before = _param_grad_snapshot(model)
    x_grad_before = None if x.grad is None else x.grad.numpy().copy()

    dx, dw = paddle.grad(loss_of(model, x), [x, model.block.inner[0].weight])
    np.testing.assert_array_equal(dx.numpy(), ref_dx.numpy())
    np.testing.assert_array_equal(dw.numpy(), ref_dw.numpy())
    (dx_only,) = paddle.grad(loss_of(model, x), x)
    np.testing.assert_array_equal(dx_only.numpy(), ref_dx_only.numpy())
    (dw_only,) = paddle.grad(loss_of(model, x), model.block.inner[2].weight)
    np.testing.assert_array_equal(dw_only.numpy(), ref_dw_only.numpy())

    after = _param_grad_snapshot(model)
    assert [a is None for a in after] == [b is None for b in before]
    for a, b in zip(after, before, strict=True):
        if b is not None:
            np.testing.assert_array_equal(a, b)
    if x_grad_before is None:
        assert x.grad is None
    else:
        np.testing.assert_array_equal(x.grad.numpy(), x_grad_before)
    assert model.block.calls == 3 + 3 + int(preexisting_grads) * 2  # each pass recomputed once
    assert not _hooks.active_frames()


@pytest.mark.parametrize("use_reentrant", [True, False], ids=["reentrant", "non_reentrant"])
def test_paddle_grad_then_normal_step(use_reentrant):
    expected = reference_grads()
    model, x = Model(use_reentrant), make_input()
    paddle.grad(loss_of(model, x), x)
    loss_of(model, x).backward()
    assert_all_equal(grads(model, x), expected)


# --------------------------------------------------------------------------- create_graph


class Smooth(nn.Layer):
    """tanh / sigmoid MLP: every op has a nonzero second derivative."""

    def __init__(self, mode):
        super().__init__()
        paddle.seed(21)
        self.l1 = nn.Linear(5, 7)
        self.region = nn.Sequential(nn.Linear(7, 7), nn.Tanh(), nn.Linear(7, 6), nn.Sigmoid())
        self.l2 = nn.Linear(6, 2)
        self.mode = mode

    def forward(self, x):
        h = paddle.tanh(self.l1(x))
        h = self.region(h) if self.mode is None else recompute(self.region, h, use_reentrant=self.mode)
        return self.l2(h)


def _grad_of_grad(mode):
    model = Smooth(mode)
    paddle.seed(4)
    x = paddle.randn([3, 5])
    x.stop_gradient = False
    loss = (model(x) ** 2).sum()
    params = list(model.parameters())
    first = paddle.grad(loss, [x] + params, create_graph=True)
    penalty = paddle.add_n([(g * g).sum() for g in first])
    penalty.backward()
    return [g.numpy() for g in first] + [x.grad.numpy()] + [p.grad.numpy() for p in params]


def test_create_graph_gradient_of_gradient_non_reentrant():
    assert_all_equal(_grad_of_grad(False), _grad_of_grad(None))
    assert not _hooks.active_frames()


def test_create_graph_input_gradient_penalty_non_reentrant():
    """Gradient penalty on d loss / d x only (the common WGAN-GP pattern)."""

    def run(mode):
        model = Smooth(mode)
        paddle.seed(4)
        x = paddle.randn([3, 5])
        x.stop_gradient = False
        (dx,) = paddle.grad(model(x).sum(), x, create_graph=True)
        ((dx.norm() - 1) ** 2).backward()
        # l2.bias does not affect dx: its gradient stays None in both runs.
        return [dx.numpy()] + [None if p.grad is None else p.grad.numpy() for p in model.parameters()]

    got, expected = run(False), run(None)
    assert [g is None for g in got] == [e is None for e in expected]
    assert sum(e is None for e in expected) == 1
    assert_all_equal([g for g in got if g is not None], [e for e in expected if e is not None])


@pytest.mark.parametrize("use_reentrant", [True, False], ids=["reentrant", "non_reentrant"])
@pytest.mark.parametrize("request_", ["region_input", "upstream", "region_param", "after_param",
                                      "region_input_and_param"])
def test_paddle_grad_with_non_leaf_region_inputs_on_and_off_the_requested_paths(use_reentrant, request_):
    """Under ``paddle.grad`` Paddle prunes edges to grad nodes that lead to no requested
    input; the reentrant backward must return None exactly there (a non-leaf region input
    that leads nowhere requested), and a gradient wherever the path is needed."""

    def run(mode):
        paddle.seed(31)
        a, region, b = nn.Linear(4, 4), nn.Sequential(nn.Linear(4, 4), nn.Tanh()), nn.Linear(4, 2)
        x = paddle.randn([3, 4])
        x.stop_gradient = False
        u = paddle.exp(a(x))  # upstream non-leaf
        h = paddle.sin(u)  # the region's (non-leaf) input
        r = region(h) if mode is None else recompute(region, h, use_reentrant=mode)
        loss = (b(r) ** 2).sum()
        wanted = {
            "region_input": [h],
            "upstream": [u],
            "region_param": [region[0].weight],
            "after_param": [b.weight],
            "region_input_and_param": [region[0].bias, h],
        }[request_]
        return [g.numpy() for g in paddle.grad(loss, wanted)]

    expected = run(None)
    got = run(use_reentrant)
    assert_all_equal(got, expected)
