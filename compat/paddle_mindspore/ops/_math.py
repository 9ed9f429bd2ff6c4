"""Arithmetic, matrix and reduction primitives."""

from __future__ import annotations

from typing import Any

import paddle

from .._primitive import Primitive
from .._surface.promote import promoted
from ._operands import axis_list, tensor_operands

__all__ = [
    "Add", "Sub", "Mul", "RealDiv", "Div", "MatMul", "BatchMatMul", "ReduceMean", "ReduceSum",
    "Exp", "Sqrt", "Neg",
]


class _Binary(Primitive):
    function: Any = None

    def compute(self, x: Any, y: Any) -> paddle.Tensor:
        x, y = tensor_operands(self.name, x, y)
        if x.dtype != y.dtype:  # MindSpore's implicit promotion (float32 scores + uint8 mask)
            target = promoted(x.dtype, y.dtype)
            x, y = x.astype(target), y.astype(target)
        return type(self).function(x, y)


class Add(_Binary):
    """``x + y`` with broadcasting."""

    function = staticmethod(paddle.add)


class Sub(_Binary):
    """``x - y`` with broadcasting."""

    function = staticmethod(paddle.subtract)


def _multiply(x: paddle.Tensor, y: paddle.Tensor) -> paddle.Tensor:
    # Paddle has no uint8 multiply kernel; MindSpore's wraps modulo 256 (a uint8 mask times
    # -10000 is 240 where the mask is 1), which int32 arithmetic cast back reproduces.
    if x.dtype == y.dtype == paddle.uint8:
        return paddle.multiply(x.astype("int32"), y.astype("int32")).astype("uint8")
    return paddle.multiply(x, y)


class Mul(_Binary):
    """``x * y`` with broadcasting."""

    function = staticmethod(_multiply)


class RealDiv(_Binary):
    """``x / y`` with broadcasting (floating point)."""

    function = staticmethod(paddle.divide)


class Div(RealDiv):
    """``x / y`` with broadcasting."""


class MatMul(Primitive):
    """``MatMul(transpose_a=False, transpose_b=False)(x, y)`` on 2-D inputs."""

    def setup(self, transpose_a: bool = False, transpose_b: bool = False) -> None:
        self.transpose_a, self.transpose_b = transpose_a, transpose_b
        self.add_prim_attr("transpose_a", transpose_a).add_prim_attr("transpose_b", transpose_b)

    def compute(self, x: paddle.Tensor, y: paddle.Tensor) -> paddle.Tensor:
        return paddle.matmul(x, y, transpose_x=self.transpose_a, transpose_y=self.transpose_b)


class BatchMatMul(MatMul):
    """``BatchMatMul(transpose_a=False, transpose_b=False)(x, y)`` over the leading batch dims."""


class _Reduce(Primitive):
    function: Any = None

    def setup(self, keep_dims: bool = False) -> None:
        self.keep_dims = keep_dims
        self.add_prim_attr("keep_dims", keep_dims)

    def compute(self, x: paddle.Tensor, axis: Any = ()) -> paddle.Tensor:
        return type(self).function(x, axis=axis_list(axis), keepdim=self.keep_dims)


class ReduceMean(_Reduce):
    """``ReduceMean(keep_dims=False)(x, axis=())``; ``()`` reduces every axis."""

    function = staticmethod(paddle.mean)


class ReduceSum(_Reduce):
    """``ReduceSum(keep_dims=False)(x, axis=())``; ``()`` reduces every axis."""

    function = staticmethod(paddle.sum)


class _Unary(Primitive):
    function: Any = None

    def compute(self, x: paddle.Tensor) -> paddle.Tensor:
        return type(self).function(x)


class Exp(_Unary):
    function = staticmethod(paddle.exp)


class Sqrt(_Unary):
    function = staticmethod(paddle.sqrt)


class Neg(_Unary):
    function = staticmethod(paddle.neg)
