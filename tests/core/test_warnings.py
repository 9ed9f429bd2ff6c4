"""No warnings per call: the cases Paddle's built-in warns about simply work here."""

import warnings

import numpy as np
import paddle
from paddle import nn

from paddle_recompute import recompute


def _run(call):
    """Gradients of a Linear whose input needs no grad, with every Python warning recorded."""
    paddle.seed(1)
    lin = nn.Linear(4, 4)
    x = paddle.randn([3, 4])  # stop_gradient=True: the case the built-in warns about
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            call(lin, x).sum().backward()
    return [str(w.message) for w in caught], lin.weight.grad


def test_no_input_needs_grad_gives_no_warning_and_exact_parameter_grads(use_reentrant, capfd):
    capfd.readouterr()
    messages, grads = _run(lambda lin, x: recompute(lin, x, use_reentrant=use_reentrant))
    printed = capfd.readouterr()
    assert messages == []
    assert printed.out == "" and printed.err == ""  # Paddle's built-in logs a warning to stderr here
    _, expected = _run(lambda lin, x: lin(x))
    np.testing.assert_array_equal(grads.numpy(), expected.numpy())


def test_the_builtin_warns_in_this_case(capfd):
    """The premise: the same call through Paddle's built-in prints its warning (and, in
    reentrant mode, drops the parameter gradients)."""
    from paddle.distributed.fleet.utils import recompute as builtin

    capfd.readouterr()
    _, grads = _run(lambda lin, x: builtin(lin, x, use_reentrant=True))
    assert "None of the inputs to current recompute block need grad" in capfd.readouterr().err
    assert grads is None
