"""Shape and layout primitives."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import paddle

from .._dtype import to_paddle_dtype
from .._primitive import Primitive
from .._validate import not_provided
from ._operands import axis_list

__all__ = ["Transpose", "ExpandDims", "Reshape", "Flatten", "Squeeze", "Cast", "Concat", "BiasAdd"]


class Transpose(Primitive):
    """``Transpose()(x, perm)``."""

    def compute(self, x: paddle.Tensor, perm: Sequence[int]) -> paddle.Tensor:
        return paddle.transpose(x, list(perm))


class ExpandDims(Primitive):
    """``ExpandDims()(x, axis)``: insert a size-1 axis."""

    def compute(self, x: paddle.Tensor, axis: int) -> paddle.Tensor:
        return paddle.unsqueeze(x, axis)


class Reshape(Primitive):
    """``Reshape()(x, shape)``."""

    def compute(self, x: paddle.Tensor, shape: Sequence[int]) -> paddle.Tensor:
        return paddle.reshape(x, list(shape))


class Flatten(Primitive):
    """``Flatten()(x)``: keep axis 0, flatten the rest."""

    def compute(self, x: paddle.Tensor) -> paddle.Tensor:
        return paddle.reshape(x, [x.shape[0], -1])


class Squeeze(Primitive):
    """``Squeeze(axis=())(x)``."""

    def setup(self, axis: Any = ()) -> None:
        self.axis = axis
        self.add_prim_attr("axis", axis)

    def compute(self, x: paddle.Tensor) -> paddle.Tensor:
        return paddle.squeeze(x, axis=axis_list(self.axis))


class Cast(Primitive):
    """``Cast()(x, dtype)``."""

    def compute(self, x: paddle.Tensor, dtype: Any) -> paddle.Tensor:
        return x.astype(to_paddle_dtype(dtype))


class Concat(Primitive):
    """``Concat(axis=0)(tensors)``."""

    def setup(self, axis: int = 0) -> None:
        self.axis = axis
        self.add_prim_attr("axis", axis)

    def compute(self, tensors: Sequence[paddle.Tensor]) -> paddle.Tensor:
        return paddle.concat(list(tensors), axis=self.axis)


class BiasAdd(Primitive):
    """``BiasAdd(data_format='NCHW')(x, bias)``: add ``bias`` along the channel axis."""

    def setup(self, data_format: str = "NCHW") -> None:
        if data_format not in ("NCHW", "NCDHW"):
            raise not_provided(f"ops.BiasAdd(data_format={data_format!r})")
        self.add_prim_attr("data_format", data_format)

    def compute(self, x: paddle.Tensor, bias: paddle.Tensor) -> paddle.Tensor:
        shape = [1, -1] + [1] * (x.ndim - 2)
        return paddle.add(x, paddle.reshape(bias, shape))
