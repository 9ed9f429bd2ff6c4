"""Functional indexing, creation and elementwise operators of ``mindspore.ops`` (2.10 signatures).

Differences from Paddle's namesakes: ``sort`` returns int32 indices (MindSpore's ``Sort``),
``repeat_elements`` repeats each element in place, ``linspace`` and ``eye`` default to
float32, ``clip_by_value`` takes the bounds as Tensors or numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import paddle

from .._dtype import float32, to_paddle_dtype
from .._validate import not_provided
from ._operands import axis_list, tensor_operands, unary

__all__ = [
    "gather_elements",
    "sort",
    "unstack",
    "tensor_scatter_elements",
    "repeat_elements",
    "eye",
    "linspace",
    "flatten",
    "mul",
    "add",
    "sub",
    "div",
    "cos",
    "sin",
    "square",
    "sign",
    "reciprocal",
    "clip_by_value",
    "reduce_sum",
    "abs",
    "norm",
]


def gather_elements(input: paddle.Tensor, dim: int, index: paddle.Tensor) -> paddle.Tensor:  # noqa: A002
    """``out[i][j] = input[index[i][j]][j]`` along ``dim`` (``take_along_axis``)."""
    return paddle.take_along_axis(input, index.astype("int64"), axis=dim, broadcast=False)


def sort(
    input_x: paddle.Tensor, axis: int = -1, descending: bool = False
) -> tuple[paddle.Tensor, paddle.Tensor]:
    """``(values, indices)``, indices int32; a stable sort."""
    indices = paddle.argsort(input_x, axis=axis, descending=descending, stable=True)
    return paddle.take_along_axis(input_x, indices, axis=axis), indices.astype("int32")


def unstack(input_x: paddle.Tensor, axis: int = 0) -> tuple[paddle.Tensor, ...]:
    # slices, not paddle.unstack: Paddle 3.3's unstack_grad crashes (SIGSEGV) when only some of
    # the outputs receive a gradient, as in ``ops.unstack(x)[0]``
    axis = axis % input_x.ndim
    return tuple(paddle.squeeze(paddle.slice(input_x, [axis], [i], [i + 1]), axis)
                 for i in range(input_x.shape[axis]))


def tensor_scatter_elements(
    input_x: paddle.Tensor,
    indices: paddle.Tensor,
    updates: paddle.Tensor,
    axis: int = 0,
    reduction: str = "none",
) -> paddle.Tensor:
    """Out-of-place scatter along ``axis``; ``reduction`` ``'none'`` or ``'add'``."""
    if reduction not in ("none", "add"):
        raise ValueError(
            f"For 'tensor_scatter_elements', the 'reduction' must be 'none' or 'add', but got {reduction!r}."
        )
    return paddle.put_along_axis(
        input_x,
        indices.astype("int64"),
        updates,
        axis,
        reduce="assign" if reduction == "none" else "add",
        broadcast=False,
    )


def repeat_elements(x: paddle.Tensor, rep: int, axis: int = 0) -> paddle.Tensor:
    return paddle.repeat_interleave(x, rep, axis=axis)


def eye(n: int, m: int | None = None, dtype: Any = float32) -> paddle.Tensor:
    return paddle.eye(n, m, dtype=to_paddle_dtype(dtype))


def linspace(start: Any, end: Any, steps: int) -> paddle.Tensor:
    """float32 ``steps`` points from ``start`` to ``end`` inclusive."""
    start = float(start.item()) if isinstance(start, paddle.Tensor) else float(start)
    end = float(end.item()) if isinstance(end, paddle.Tensor) else float(end)
    return paddle.linspace(start, end, int(steps), dtype="float32")


def flatten(
    input: paddle.Tensor, order: str = "C", *, start_dim: int = 1, end_dim: int = -1
) -> paddle.Tensor:  # noqa: A002
    if order != "C":
        raise not_provided(f"ops.flatten(order={order!r})")
    if input.ndim == 0:
        return paddle.reshape(input, [1])
    return paddle.flatten(input, start_axis=start_dim, stop_axis=end_dim)


def mul(input: Any, other: Any) -> paddle.Tensor:  # noqa: A002
    x, y = tensor_operands("mul", input, other)
    return paddle.multiply(x, y)


def add(input: Any, other: Any, alpha: float = 1) -> paddle.Tensor:  # noqa: A002
    x, y = tensor_operands("add", input, other)
    return paddle.add(x, y if alpha == 1 else y * alpha)


def sub(input: Any, other: Any, alpha: float = 1) -> paddle.Tensor:  # noqa: A002
    x, y = tensor_operands("sub", input, other)
    return paddle.subtract(x, y if alpha == 1 else y * alpha)


def div(input: Any, other: Any, rounding_mode: str | None = None) -> paddle.Tensor:  # noqa: A002
    x, y = tensor_operands("div", input, other)
    if rounding_mode is None:
        return paddle.divide(
            x.astype("float32") if not x.is_floating_point() else x,
            y.astype(x.dtype) if not y.is_floating_point() else y,
        )
    out = paddle.divide(x.astype("float32"), y.astype("float32"))
    out = paddle.floor(out) if rounding_mode == "floor" else paddle.trunc(out)
    return out.astype(x.dtype)


cos = unary("cos", paddle.cos)
sin = unary("sin", paddle.sin)
square = unary("square", paddle.square)
sign = unary("sign", paddle.sign)
abs = unary("abs", paddle.abs)  # noqa: A001  (MindSpore's name)
reciprocal = unary("reciprocal", paddle.reciprocal)


def clip_by_value(x: paddle.Tensor, clip_value_min: Any = None, clip_value_max: Any = None) -> paddle.Tensor:
    out = x
    if clip_value_min is not None:
        out = paddle.maximum(out, tensor_operands("clip_by_value", out, clip_value_min)[1].astype(out.dtype))
    if clip_value_max is not None:
        out = paddle.minimum(out, tensor_operands("clip_by_value", out, clip_value_max)[1].astype(out.dtype))
    return out


def reduce_sum(input_x: paddle.Tensor, axis: Any = (), keep_dims: bool = False) -> paddle.Tensor:
    return paddle.sum(input_x, axis=axis_list(axis), keepdim=keep_dims)


def norm(
    x: paddle.Tensor, axis: Sequence[int] | int, p: int, keep_dims: bool, epsilon: float
) -> paddle.Tensor:
    """``LpNorm``: ``(sum |x|^p) ^ (1/p)`` over ``axis``, at least ``epsilon`` (MindSpore clamps)."""
    axes = [axis] if isinstance(axis, int) else list(axis)
    out = paddle.sum(paddle.abs(x) ** p, axis=axes, keepdim=keep_dims) ** (1.0 / p)
    return paddle.maximum(out, paddle.full([], epsilon, dtype=out.dtype)) if epsilon else out
