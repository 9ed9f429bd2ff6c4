"""A tensor saved for backward whose identity matters comes back as itself (NOTE [ Saved
leaves ] in ``_core/identity.py``).

The PyLayers below have the shape of the large-model stack's: PaddleFormers' FP8 linear
(``transformers/fp8_utils.py``: the weight's gradient goes into ``weight.main_grad``, the
PyLayer returns None for it) and the fused linear with grad add of Paddle's ``mp_layers.py``
and PaddleNLP (``main_grad`` if the weight has one, else into ``weight.grad`` in place when
there is one, else returned).  Handed a copy of the weight, both lose the gradient without
an error.  Every case trains 3 optimizer steps of 2 micro-batches each and must be bit-equal
to the same training without recompute: losses, every ``main_grad`` (or ``.grad``) before
each step, and the parameters after.
"""

from __future__ import annotations

import numpy as np
import paddle
import pytest
from _rc_helpers import RunCount, seed_all
from paddle import nn

from paddle_recompute import (
    no_recompute,
    policies,
    recompute,
    recompute_hybrid,
    recompute_sequential,
    save_on_cpu,
)

STEPS, MICRO, LR = 3, 2, 0.1
SAW = {"param": 0, "copy": 0}  # what the PyLayers' backward got for the weight


def _note_weight(weight) -> None:
    SAW["param" if isinstance(weight, paddle.base.framework.EagerParamBase) else "copy"] += 1


class FP8StyleLinear(paddle.autograd.PyLayer):
    """PaddleFormers' FP8 linear: ``weight.main_grad`` accumulates, no gradient returned."""

    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        return paddle.matmul(x, weight)

    @staticmethod
    def backward(ctx, dy):
        x, weight = ctx.saved_tensor()
        _note_weight(weight)
        dx = None if x.stop_gradient else paddle.matmul(dy, weight, transpose_y=True)
        dw = paddle.matmul(x.reshape([-1, x.shape[-1]]), dy.reshape([-1, dy.shape[-1]]), transpose_x=True)
        if hasattr(weight, "main_grad"):
            if weight.main_grad is None:
                weight.main_grad = paddle.zeros(weight.shape, dtype=paddle.float32)
            weight.main_grad.add_(dw)
            return dx, None
        return dx, dw


class GradAddLinear(paddle.autograd.PyLayer):
    """The fused linear with grad add: ``main_grad`` if present, else ``.grad`` in place."""

    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        return paddle.matmul(x, weight)

    @staticmethod
    def backward(ctx, dy):
        x, weight = ctx.saved_tensor()
        _note_weight(weight)
        dx = None if x.stop_gradient else paddle.matmul(dy, weight, transpose_y=True)
        dw = paddle.matmul(x.reshape([-1, x.shape[-1]]), dy.reshape([-1, dy.shape[-1]]), transpose_x=True)
        if hasattr(weight, "main_grad"):
            if weight.main_grad is None:
                weight.main_grad = dw
            else:
                weight.main_grad.add_(dw)
            return dx, None
        if weight.grad is not None:
            weight.grad.add_(dw)
            return dx, None
        return dx, dw


class Block(nn.Layer):
    """Two custom-PyLayer projections around a plain Linear and tanh."""

    calls = RunCount()  # forward runs, reruns included

    def __init__(self, layer_cls, width: int = 8):
        super().__init__()
        self.layer_cls = layer_cls
        self.w1 = self.create_parameter([width, width])
        self.mid = nn.Linear(width, width)
        self.w2 = self.create_parameter([width, width])

    def forward(self, x):
        self.calls += 1
        h = paddle.tanh(self.layer_cls.apply(x, self.w1))
        h = self.mid(h)
        return self.layer_cls.apply(paddle.tanh(h), self.w2) + x


class Nested(nn.Layer):
    """A region whose body opens another region of the same kind."""

    def __init__(self, layer_cls, reentrant: bool):
        super().__init__()
        self.inner = Block(layer_cls)
        self.outer = Block(layer_cls)
        self.reentrant = reentrant

    def forward(self, x):
        return self.outer(recompute(self.inner, x, use_reentrant=self.reentrant))


class NoRecomputeInside(nn.Layer):
    def __init__(self, layer_cls):
        super().__init__()
        self.a = Block(layer_cls)
        self.b = Block(layer_cls)

    def forward(self, x):
        return self.b(no_recompute(self.a, x))


def _one_block(layer_cls):
    return nn.LayerList([Block(layer_cls), Block(layer_cls)])


def _runs(model, x, wrap):
    for block in model:
        x = wrap(block, x)
    return x


WRAPS = {
    "recompute": lambda r: lambda b, x: recompute(b, x, use_reentrant=r),
    "offload_indices": lambda r: lambda b, x: recompute(b, x, use_reentrant=r, offload_indices=[0]),
}
NON_REENTRANT_ONLY = {
    "policy_save_matmuls": lambda b, x: recompute(b, x, use_reentrant=False, policy=policies.save_matmuls),
    "policy_recompute_all": lambda b, x: recompute(b, x, use_reentrant=False, policy=policies.recompute_all),
    "policy_offload": lambda b, x: recompute(b, x, use_reentrant=False,
                                             policy=policies.offload(policies.save_matmuls)),
    "save_on_cpu_around_region": lambda b, x: _on_cpu(lambda: recompute(b, x, use_reentrant=False)),
}


def _on_cpu(call):
    with save_on_cpu():
        return call()


def train(model, wrap, main_grad: bool, data):
    """STEPS optimizer steps of MICRO micro-batches; returns losses, grads per step, params."""
    params = model.parameters()
    if main_grad:
        for p in params:
            p.main_grad = None
    losses, grads = [], []
    for step in range(STEPS):
        for micro in range(MICRO):
            x = data[step * MICRO + micro]
            loss = _runs(model, x, wrap).square().mean() if isinstance(model, nn.LayerList) else \
                wrap(model, x).square().mean()
            loss.backward()
            losses.append(loss.numpy())
        step_grads = []
        with paddle.no_grad():
            for p in params:
                g = p.main_grad if main_grad else p.grad
                if main_grad and p.grad is not None:  # the plain Linear's gradient arrives here
                    g = p.grad if g is None else g + p.grad
                step_grads.append(None if g is None else g.numpy().copy())
                if g is not None:
                    p.set_value(p - LR * g)
                p.clear_gradient(False)
                if main_grad:
                    p.main_grad = None
        grads.append(step_grads)
    return losses, grads, [p.numpy() for p in params]


def _data():
    seed_all()
    return [paddle.randn([4, 8]) for _ in range(STEPS * MICRO)]


def _assert_same(got, want):
    (l1, g1, p1), (l2, g2, p2) = got, want
    for a, b in zip(l1, l2, strict=True):
        np.testing.assert_array_equal(a, b)
    for s1, s2 in zip(g1, g2, strict=True):
        for a, b in zip(s1, s2, strict=True):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_array_equal(a, b)
                assert np.abs(a).sum() > 0
    for a, b in zip(p1, p2, strict=True):
        np.testing.assert_array_equal(a, b)


def _check(build, wrap, main_grad: bool, reruns_expected: bool = True):
    data = _data()
    seed_all()
    plain = build()
    want = train(plain, lambda b, x: b(x), main_grad, data)
    seed_all()
    model = build()
    SAW.update(param=0, copy=0)
    got = train(model, wrap, main_grad, data)
    _assert_same(got, want)
    assert SAW["copy"] == 0 and SAW["param"] > 0, SAW
    calls = sum(layer.calls for layer in model.sublayers(include_self=True) if isinstance(layer, Block))
    plain_calls = sum(layer.calls for layer in plain.sublayers(include_self=True) if isinstance(layer, Block))
    if reruns_expected:
        assert calls > plain_calls, "the regions never reran"
    return got


LAYERS = {"fp8": FP8StyleLinear, "grad_add": GradAddLinear}


@pytest.mark.parametrize("main_grad", [True, False], ids=["main_grad", "grad"])
@pytest.mark.parametrize("kind", list(LAYERS))
@pytest.mark.parametrize("how", list(WRAPS))
def test_pylayer_weight_is_the_parameter(how, kind, main_grad, use_reentrant):
    _check(lambda: _one_block(LAYERS[kind]), WRAPS[how](use_reentrant), main_grad)


@pytest.mark.parametrize("main_grad", [True, False], ids=["main_grad", "grad"])
@pytest.mark.parametrize("how", list(NON_REENTRANT_ONLY))
def test_pylayer_weight_in_policy_and_offload_regions(how, main_grad):
    _check(lambda: _one_block(GradAddLinear), NON_REENTRANT_ONLY[how], main_grad)


@pytest.mark.parametrize("main_grad", [True, False], ids=["main_grad", "grad"])
def test_pylayer_weight_in_nested_regions(main_grad, use_reentrant):
    _check(lambda: Nested(GradAddLinear, use_reentrant),
           lambda b, x: recompute(b, x, use_reentrant=use_reentrant), main_grad)


@pytest.mark.parametrize("main_grad", [True, False], ids=["main_grad", "grad"])
def test_pylayer_weight_under_no_recompute(main_grad):
    _check(lambda: NoRecomputeInside(GradAddLinear),
           lambda b, x: recompute(b, x, use_reentrant=False), main_grad)


class _Solo:
    nranks, rank = 1, 0


@pytest.mark.parametrize("main_grad", [True, False], ids=["main_grad", "grad"])
@pytest.mark.parametrize("partition", [False, True])
def test_pylayer_weight_in_recompute_hybrid(main_grad, partition):
    ctx = {"mp_group": _Solo(), "partition": partition, "offload": partition}
    _check(lambda: _one_block(FP8StyleLinear), lambda b, x: recompute_hybrid(ctx, b, x), main_grad)


@pytest.mark.parametrize("main_grad", [True, False], ids=["main_grad", "grad"])
def test_pylayer_weight_in_recompute_sequential(main_grad, use_reentrant):
    def build():
        return nn.Sequential(*[Block(GradAddLinear) for _ in range(4)])

    _check(build, lambda m, x: recompute_sequential({"segments": 2, "use_reentrant": use_reentrant}, m, x),
           main_grad)


class Keep(paddle.autograd.PyLayer):
    """Saves its input; backward notes what it got and writes ``main_grad`` on it."""

    seen: list = []

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        Keep.seen.append(x)
        x.main_grad = dy * 2
        return dy * 2


LEAF_WRAPS = {
    "reentrant": lambda f, x: recompute(f, x, use_reentrant=True),
    "non_reentrant": lambda f, x: recompute(f, x, use_reentrant=False),
    "policy": lambda f, x: recompute(f, x, use_reentrant=False, policy=policies.save_matmuls),
    "save_on_cpu": lambda f, x: _on_cpu(lambda: f(x)),
}


@pytest.mark.parametrize("how", list(LEAF_WRAPS))
def test_saved_leaf_input_is_itself(how):
    """A leaf that needs a gradient (not a parameter), saved by a PyLayer, is the caller's."""
    x = paddle.randn([3])
    x.stop_gradient = False
    lin = nn.Linear(3, 3)
    Keep.seen.clear()
    LEAF_WRAPS[how](lambda t: lin(Keep.apply(t)), x).sum().backward()
    assert len(Keep.seen) == 1 and Keep.seen[0] is x
    np.testing.assert_array_equal(x.main_grad.numpy(), x.grad.numpy())
