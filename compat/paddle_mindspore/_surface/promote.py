"""MindSpore's implicit type promotion for Tensor operators between two tensors.

Paddle 3.3 refuses ``x == y`` or ``x + y`` when one tensor is int64 and the other int32, or
one is an integer and the other a float tensor (``Type promotion only support calculations
between floating-point numbers ...``). MindSpore promotes: bool < int8 < int16 < int32 <
int64 < float16 < float32 < float64 (uint8 above bool, bfloat16 with float16); integer with
float gives the float type. These members cast both operands to that type and call Paddle's
operator; MindSpore code gets them (NOTE [ Caller-scoped Tensor semantics ]). Python numbers
need nothing: Paddle already gives MindSpore's result (``int_tensor * 0.5`` is float32,
``int_tensor / int_tensor`` float32).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import paddle

__all__ = ["promoting", "OPERATORS"]

OPERATORS = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__add__", "__radd__", "__sub__",
             "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__", "__floordiv__",
             "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__")

_RANK = {paddle.bool: 0, paddle.uint8: 1, paddle.int8: 1, paddle.int16: 2, paddle.int32: 3, paddle.int64: 4,
         paddle.float16: 5, paddle.bfloat16: 5, paddle.float32: 6, paddle.float64: 7}


def promoted(a: Any, b: Any) -> Any:
    """The dtype MindSpore computes ``a op b`` in (``a`` when the pair is not ranked here)."""
    ra, rb = _RANK.get(a), _RANK.get(b)
    if ra is None or rb is None:
        return a
    if ra == rb:  # uint8 with int8, float16 with bfloat16: MindSpore widens
        return {1: paddle.int16, 5: paddle.float32}.get(ra, a)
    return a if ra > rb else b


def promoting(original: Callable) -> Callable:
    """``original(self, other)`` with both tensors cast to their promoted dtype first."""
    def member(self: paddle.Tensor, other: Any, *args: Any) -> Any:
        if isinstance(other, paddle.Tensor) and other.dtype != self.dtype:
            target = promoted(self.dtype, other.dtype)
            if self.dtype != target:
                self = self.astype(target)
            if other.dtype != target:
                other = other.astype(target)
        return original(self, other, *args)

    return member
