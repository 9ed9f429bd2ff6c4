"""Tensor operators (``x @ y``, ``x + y``, ``x[i]`` ...) are seen by policies (NOTE [ Tensor operators ])."""

import re

import numpy as np
import paddle
import pytest
from _rc_helpers import requires_grad

import paddle_recompute as pr
from paddle_recompute import policies
from paddle_recompute._core import ops, tensor_methods
from paddle_recompute._planner.options.policy_frame import measured_regions

EXPRESSIONS = [
    "x + y", "x + 2.0", "2.0 + x", "x - y", "x - 2.0", "2.0 - x", "x * y", "x * 2.0", "2 * x",
    "x / y", "x / 2.0", "2.0 / x", "x ** 2", "x ** y", "2.0 ** x", "x @ y.T", "x % y",
]


def _node_name(t) -> str:
    """``DivScaleGradNode`` -> ``div_scale``: the kernel Paddle ran, read off its grad node."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", t.grad_fn.name().removesuffix("GradNode")).lower()


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_named_as_the_kernel_paddle_runs(expression):
    seen = []

    def record(info):
        seen.append(info.op)
        return False

    x = requires_grad(paddle.rand([3, 3]) + 0.5)
    y = paddle.rand([3, 3]) + 0.5

    def f(x):
        return eval(expression, {}, {"x": x, "y": y})  # noqa: S307  (the expressions above)

    plain = f(x)
    out = pr.recompute(f, x, use_reentrant=False, policy=record)
    assert seen[-1] == _node_name(plain), (expression, seen)
    np.testing.assert_array_equal(out.numpy(), plain.numpy())


def test_indexing_is_getitem_and_methods_are_restored():
    seen = []
    x = requires_grad(paddle.rand([4, 6]))
    before = {name: vars(paddle.Tensor)[name] for name in tensor_methods.ORIGINALS}
    pr.recompute(lambda t: (t[1:3] * t[0]).sum(), x, use_reentrant=False,
                 policy=lambda info: seen.append(info.op) or False).backward()
    assert seen[:3] == ["getitem", "getitem", "multiply"], seen
    assert not ops.is_installed()
    assert {name: vars(paddle.Tensor)[name] for name in before} == before


def test_methods_restored_after_an_error():
    before = tensor_methods.current()  # Paddle's, or the MindSpore layer's promoting operators

    def boom(t):
        _ = t @ t
        raise KeyError("inside")

    with pytest.raises(KeyError, match="inside"):
        pr.recompute(boom, requires_grad(paddle.rand([2, 2])), use_reentrant=False,
                     policy=policies.save_matmuls)
    assert all(vars(paddle.Tensor)[n] is fn for n, fn in before.items())


def _attention(q, k, v):
    """Attention written the way model code writes it: operators, no paddle.matmul."""
    probs = paddle.nn.functional.softmax((q @ k.transpose([0, 2, 1])) * 0.5, -1)
    return (probs @ v + q) * v


def test_operator_matmuls_are_kept_and_skipped():
    """``q @ kᵀ`` and ``probs @ v`` are matmuls: save_matmuls keeps them and marks them
    skippable in the rerun (before, they were invisible: never kept, always rerun)."""
    q, k, v = (requires_grad(paddle.rand([2, 4, 8])) for _ in range(3))
    plain = _attention(q, k, v)
    grads = paddle.grad(plain.sum(), [q, k, v])
    with measured_regions() as finished:
        out = pr.recompute(_attention, q, k, v, use_reentrant=False, policy=policies.save_matmuls)
    (frame,) = finished
    matmuls = [op for op in frame.ops if op.name == "matmul"]
    assert len(matmuls) == 2 and all(op.skippable for op in matmuls)
    assert [op.name for op in frame.ops].count("multiply") == 1  # ``... * v``
    np.testing.assert_array_equal(out.numpy(), plain.numpy())
    for a, b in zip(paddle.grad(out.sum(), [q, k, v]), grads, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
