"""``mindspore.numpy`` array manipulation and math: NumPy's signatures on Paddle tensors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import paddle

from ..ops._operands import axis_list
from ._creation import asarray

__all__ = [
    "concatenate",
    "stack",
    "split",
    "reshape",
    "transpose",
    "expand_dims",
    "squeeze",
    "tile",
    "roll",
    "tensordot",
    "matmul",
    "dot",
    "where",
    "mean",
    "sum",
    "amax",
    "amin",
    "abs",
    "exp",
    "log",
    "sqrt",
    "square",
    "maximum",
    "minimum",
    "clip",
    "argmax",
    "argmin",
    "flip",
    "cumsum",
    "var",
    "std",
]


def _t(a: Any) -> paddle.Tensor:
    return a if isinstance(a, paddle.Tensor) else asarray(a)


def _axis(axis: Any) -> Any:
    return axis_list(axis) if axis is not None else None


def concatenate(arrays: Sequence[Any], axis: int = 0) -> paddle.Tensor:
    return paddle.concat([_t(a) for a in arrays], axis=axis)


def stack(arrays: Sequence[Any], axis: int = 0) -> paddle.Tensor:
    return paddle.stack([_t(a) for a in arrays], axis=axis)


def split(x: paddle.Tensor, indices_or_sections: Any, axis: int = 0) -> tuple | list:
    """An int: that many equal parts (a tuple); a list: the split points (a list, as MindSpore returns)."""
    if isinstance(indices_or_sections, int):
        return tuple(paddle.split(x, indices_or_sections, axis=axis))
    points = [0, *indices_or_sections, x.shape[axis]]
    return list(paddle.split(x, [b - a for a, b in zip(points, points[1:], strict=False)], axis=axis))


def reshape(x: paddle.Tensor, new_shape: Any) -> paddle.Tensor:
    return paddle.reshape(x, [new_shape] if isinstance(new_shape, int) else list(new_shape))


def transpose(a: paddle.Tensor, axes: Sequence[int] | None = None) -> paddle.Tensor:
    return paddle.transpose(a, list(axes) if axes is not None else list(range(a.ndim))[::-1])


def expand_dims(a: paddle.Tensor, axis: Any) -> paddle.Tensor:
    return paddle.unsqueeze(a, axis if isinstance(axis, int) else list(axis))


def squeeze(a: paddle.Tensor, axis: Any = None) -> paddle.Tensor:
    return paddle.squeeze(a, axis=_axis(axis))


def tile(a: paddle.Tensor, reps: Any) -> paddle.Tensor:
    reps = [reps] if isinstance(reps, int) else list(reps)
    a = _t(a)
    while a.ndim < len(reps):
        a = a.unsqueeze(0)
    return paddle.tile(a, [1] * (a.ndim - len(reps)) + reps)


def roll(a: paddle.Tensor, shift: Any, axis: Any = None) -> paddle.Tensor:
    return paddle.roll(a, shift, axis=axis)


def tensordot(a: paddle.Tensor, b: paddle.Tensor, axes: Any = 2) -> paddle.Tensor:
    return paddle.tensordot(a, b, axes=axes)


def matmul(x1: paddle.Tensor, x2: paddle.Tensor) -> paddle.Tensor:
    return paddle.matmul(x1, x2)


def dot(a: paddle.Tensor, b: paddle.Tensor) -> paddle.Tensor:
    """NumPy's ``dot``: the last axis of ``a`` with the second-to-last of ``b``."""
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if b.ndim == 1:
        return paddle.matmul(a, b)
    return paddle.tensordot(a, b, axes=[[a.ndim - 1], [b.ndim - 2]])


def where(condition: Any, x: Any = None, y: Any = None) -> Any:
    if x is None and y is None:
        return tuple(paddle.nonzero(_t(condition), as_tuple=True))
    x, y = _t(x), _t(y)
    return paddle.where(_t(condition), x, y.astype(x.dtype))


def mean(a: paddle.Tensor, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> paddle.Tensor:
    return paddle.mean(a, axis=_axis(axis), keepdim=keepdims)


def sum(
    a: paddle.Tensor,
    axis: Any = None,
    dtype: Any = None,
    keepdims: bool = False,  # noqa: A001
    initial: Any = None,
) -> paddle.Tensor:
    out = paddle.sum(a, axis=_axis(axis), keepdim=keepdims)
    return out if initial is None else out + initial


def amax(a: paddle.Tensor, axis: Any = None, keepdims: bool = False) -> paddle.Tensor:
    return paddle.max(a, axis=_axis(axis), keepdim=keepdims)


def amin(a: paddle.Tensor, axis: Any = None, keepdims: bool = False) -> paddle.Tensor:
    return paddle.min(a, axis=_axis(axis), keepdim=keepdims)


def var(x: paddle.Tensor, axis: Any = None, ddof: int = 0, keepdims: bool = False) -> paddle.Tensor:
    mean_ = paddle.mean(x, axis=_axis(axis), keepdim=True)
    count = x.size // mean_.size
    return paddle.sum(paddle.square(x - mean_), axis=_axis(axis), keepdim=keepdims) / (count - ddof)


def std(x: paddle.Tensor, axis: Any = None, ddof: int = 0, keepdims: bool = False) -> paddle.Tensor:
    return paddle.sqrt(var(x, axis, ddof, keepdims))


def abs(x: paddle.Tensor) -> paddle.Tensor:  # noqa: A001
    return paddle.abs(x)


def exp(x: paddle.Tensor) -> paddle.Tensor:
    return paddle.exp(x)


def log(x: paddle.Tensor) -> paddle.Tensor:
    return paddle.log(x)


def sqrt(x: paddle.Tensor) -> paddle.Tensor:
    return paddle.sqrt(x)


def square(x: paddle.Tensor) -> paddle.Tensor:
    return paddle.square(x)


def maximum(x1: Any, x2: Any) -> paddle.Tensor:
    x1, x2 = _t(x1), _t(x2)
    return paddle.maximum(x1, x2.astype(x1.dtype))


def minimum(x1: Any, x2: Any) -> paddle.Tensor:
    x1, x2 = _t(x1), _t(x2)
    return paddle.minimum(x1, x2.astype(x1.dtype))


def clip(x: paddle.Tensor, xmin: Any, xmax: Any) -> paddle.Tensor:
    out = x if xmin is None else maximum(x, xmin)
    return out if xmax is None else minimum(out, xmax)


def argmax(a: paddle.Tensor, axis: int | None = None) -> paddle.Tensor:
    return paddle.argmax(a if axis is not None else a.flatten(), axis=axis if axis is not None else 0).astype(
        "int32"
    )


def argmin(a: paddle.Tensor, axis: int | None = None) -> paddle.Tensor:
    return paddle.argmin(a if axis is not None else a.flatten(), axis=axis if axis is not None else 0).astype(
        "int32"
    )


def flip(m: paddle.Tensor, axis: Any = None) -> paddle.Tensor:
    return paddle.flip(m, axis=list(range(m.ndim)) if axis is None else _axis(axis))


def cumsum(a: paddle.Tensor, axis: int | None = None, dtype: Any = None) -> paddle.Tensor:
    return paddle.cumsum(a, axis=axis)
