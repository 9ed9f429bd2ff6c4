"""Layers a recomputed function reaches without being given them (module globals, a holder
object's attributes, helper functions): their state is put back for the rerun like a
Layer's, so BatchNorm statistics, spectral norm's vectors, losses and gradients equal
training without recompute, bit for bit."""

import functools
import types

import numpy as np
import paddle
import pytest
from _rc_helpers import Counting
from paddle import nn

from paddle_recompute import recompute
from paddle_recompute.extend import find_roots

# The functions below read these globals; each test installs its model first (``_install``).
MODEL = None
LAYERS: list = []
SPECTRAL = None


def global_function(x):
    return MODEL(x)


GLOBAL_LAMBDA = lambda x: MODEL(x)  # noqa: E731 (a global lambda is the case under test)


def _helper(x):
    return MODEL(x)


def calls_helper(x):
    return _helper(x) * 1.0


def over_list(x):
    for layer in LAYERS:
        x = layer(x)
    return x


def spectral_function(x):
    return paddle.tanh(SPECTRAL(x))


class Holder:
    """Not a Layer: holds the model as an attribute."""

    def __init__(self, net):
        self.net = net
        self.scale = 1.0

    def run(self, x):
        return self.net(x) * self.scale


def closure_over(holder):
    def run(x):
        return holder.net(x)
    return run


PATTERNS = {
    "global_function": lambda counted: global_function,
    "holder_method": lambda counted: Holder(counted).run,
    "global_lambda": lambda counted: GLOBAL_LAMBDA,
    "global_helper": lambda counted: calls_helper,
    "global_list": lambda counted: over_list,
    "closure_over_holder": lambda counted: closure_over(Holder(counted)),
}


def _install(counted: Counting) -> None:
    global MODEL
    MODEL = counted
    LAYERS[:] = [counted]  # the list pattern runs the same model through a global list


def _model() -> Counting:
    paddle.seed(3)
    return Counting(nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1D(8), nn.ReLU(), nn.Linear(8, 4)))


def _train(pattern: str, use_reentrant) -> dict:
    """Two SGD steps through the pattern's function (``use_reentrant=None``: no recompute):
    losses, gradients of the input and every parameter, parameters and buffers after."""
    counted = _model()
    _install(counted)
    function = PATTERNS[pattern](counted)
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=counted.parameters())
    paddle.seed(11)
    out: dict = {"loss": [], "grads": []}
    for _ in range(2):
        x = paddle.randn([16, 8])
        x.stop_gradient = False
        y = function(x) if use_reentrant is None else recompute(function, x,
                                                                  use_reentrant=use_reentrant)
        loss = (y * y).mean()
        loss.backward()
        out["loss"].append(loss.numpy())
        out["grads"].append([x.grad.numpy()] + [p.grad.numpy() for p in counted.parameters()
                                                 if not p.stop_gradient])
        opt.step()
        opt.clear_grad()
    out["params"] = [p.numpy() for p in counted.parameters() if not p.stop_gradient]
    norm = counted.inner[1]  # BatchNorm1D's running statistics (no-gradient parameters)
    out["statistics"] = [norm._mean.numpy(), norm._variance.numpy()]
    out["calls"] = counted.calls
    return out


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_reached_layers_match_no_recompute(pattern, use_reentrant):
    ref = _train(pattern, None)
    got = _train(pattern, use_reentrant)
    assert ref["calls"] == 2 and got["calls"] == 4  # every step reran the model
    for a, b in zip(ref["loss"], got["loss"], strict=True):
        np.testing.assert_array_equal(a, b)
    for step_ref, step_got in zip(ref["grads"], got["grads"], strict=True):
        for a, b in zip(step_ref, step_got, strict=True):
            np.testing.assert_array_equal(a, b)
    assert len(ref["params"]) == 6  # two Linears' and BatchNorm's weights and biases
    for a, b in zip(ref["params"], got["params"], strict=True):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(ref["statistics"], got["statistics"], strict=True):
        np.testing.assert_array_equal(a, b)


def _spectral_grads(use_reentrant) -> tuple:
    global SPECTRAL
    paddle.seed(5)
    SPECTRAL = nn.utils.spectral_norm(nn.Linear(8, 8))
    x = paddle.randn([4, 8])
    x.stop_gradient = False
    y = (spectral_function(x) if use_reentrant is None
         else recompute(spectral_function, x, use_reentrant=use_reentrant))
    y.sum().backward()
    return ([x.grad.numpy()] + [p.grad.numpy() for p in SPECTRAL.parameters()],
            [b.numpy() for b in SPECTRAL.buffers()])


def test_spectral_norm_through_a_global_function(use_reentrant):
    # the power iteration moves u and v at every forward: the rerun must start from the
    # vectors the forward started from, or the normalized weight (and the gradient) differs
    ref_grads, ref_buffers = _spectral_grads(None)
    grads, buffers = _spectral_grads(use_reentrant)
    assert len(ref_buffers) == 3  # the normalized weight, weight_u, weight_v
    for a, b in zip(ref_grads + ref_buffers, grads + buffers, strict=True):
        np.testing.assert_array_equal(a, b)


# ------------------------------------------------------------------ the search itself


def test_roots_found_once_each_and_the_limits():
    counted = _model()
    _install(counted)
    holder = Holder(counted)
    both = functools.partial(lambda h, x, other=None: h.run(x), holder, other=counted)
    assert find_roots(both, (counted,), {"m": counted}) == (counted,)
    # a dict of layers held by a global object, reached through a bound method
    table = Holder({"a": counted})
    assert find_roots(table.run, (), {}) == (counted,)
    # the documented limit: a layer reached through a module or an attribute of an
    # attribute is not found (the fix is to pass it)
    counted = _model()
    module = types.ModuleType("holder_module")
    module.model = counted
    outer = Holder(Holder(counted))
    assert find_roots(lambda x: module.model(x), (), {}) == ()
    assert find_roots(lambda x: outer.net.net(x), (), {}) == ()
    assert find_roots(functools.partial(lambda m, x: m(x), counted), (), {}) == (counted,)


def _recursive_a(x, n=2):
    return _recursive_b(x, n - 1) if n else MODEL(x)


def _recursive_b(x, n):
    return _recursive_a(x, n)


def test_recursion_between_functions_ends():
    counted = _model()
    _install(counted)
    assert find_roots(_recursive_a, (), {}) == (counted,)
