"""Operand helpers shared by the primitive and functional ops."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import paddle

__all__ = ["tensor_operands", "int_tuple", "axis_list"]


def tensor_operands(op: str, x: Any, y: Any) -> tuple[paddle.Tensor, paddle.Tensor]:
    """Both operands as tensors; a Python number takes the other operand's dtype."""
    x_is, y_is = isinstance(x, paddle.Tensor), isinstance(y, paddle.Tensor)
    if not (x_is or y_is):
        raise TypeError(f"For '{op}', at least one of the inputs must be a Tensor, "
                        f"but got {type(x).__name__} and {type(y).__name__}.")
    if not x_is:
        x = paddle.full([], x, dtype=y.dtype)
    if not y_is:
        y = paddle.full([], y, dtype=x.dtype)
    return x, y


def int_tuple(op: str, name: str, value: Any, size: int) -> tuple[int, ...]:
    """An int or a sequence of ``size`` ints (or of 4 ints for NCHW strides) as a tuple."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,) * size
    if isinstance(value, Sequence) and all(isinstance(v, int) for v in value):
        if len(value) == size:
            return tuple(value)
        if len(value) == 4 and size == 2:  # MindSpore also accepts (1, 1, h, w)
            return tuple(value[2:])
    raise ValueError(f"For '{op}', '{name}' must be an int or a tuple of {size} ints, but got {value!r}.")


def axis_list(axis: Any) -> list[int] | None:
    """MindSpore reduction axes (``()`` means all) as Paddle's ``axis`` argument."""
    if axis is None or axis == ():
        return None
    if isinstance(axis, int):
        return [axis]
    return list(axis)
