"""Primitives that language models built on ``mindspore.ops.operations`` use (mindformers'
Llama among them): gathers, comparisons, ``Log``/``Rsqrt``/``SiLU``, ``ReduceMax`` and
``StridedSlice``. Each computes what MindSpore's kernel computes, its gradient included.
"""

from __future__ import annotations

from typing import Any

import paddle
import paddle.nn.functional as F

from .._primitive import Primitive
from .._validate import not_provided
from ._math import _Reduce, _Unary
from ._operands import tensor_operands

__all__ = [
    "MoveTo",
    "Maximum",
    "Addcmul",
    "Pow",
    "Gather",
    "GatherD",
    "LessEqual",
    "NotEqual",
    "Log",
    "Rsqrt",
    "SiLU",
    "ReduceMax",
    "StridedSlice",
]


class Gather(Primitive):
    """``Gather(batch_dims=0)(input_params, input_indices, axis)``: rows of ``input_params``
    along ``axis``; the output's shape is ``params.shape[:axis] + indices.shape +
    params.shape[axis + 1:]``. The gradient adds into the gathered rows (repeats add up)."""

    def setup(self, batch_dims: int = 0) -> None:
        self.batch_dims = batch_dims
        self.add_prim_attr("batch_dims", batch_dims)

    def compute(self, input_params: paddle.Tensor, input_indices: Any, axis: int) -> paddle.Tensor:
        if self.batch_dims != 0:
            raise not_provided(
                f"Gather(batch_dims={self.batch_dims}) called", "only batch_dims=0 is computed"
            )
        indices = (
            input_indices if isinstance(input_indices, paddle.Tensor) else paddle.to_tensor(input_indices)
        )
        axis = axis % input_params.ndim
        flat = paddle.gather(input_params, indices.reshape([-1]), axis=axis)
        shape = list(input_params.shape[:axis]) + list(indices.shape) + list(input_params.shape[axis + 1 :])
        return flat.reshape(shape)


class GatherD(Primitive):
    """``GatherD()(x, dim, index)``: ``out[i][j] = x[index[i][j]][j]`` for ``dim=0`` (and so on)."""

    def compute(self, x: paddle.Tensor, dim: int, index: paddle.Tensor) -> paddle.Tensor:
        return paddle.take_along_axis(x, index, axis=dim, broadcast=False)


class _Compare(Primitive):
    function: Any = None

    def compute(self, x: Any, y: Any) -> paddle.Tensor:
        x, y = tensor_operands(self.name, x, y)
        return type(self).function(x, y)


class LessEqual(_Compare):
    """``x <= y`` with broadcasting (a bool tensor)."""

    function = staticmethod(paddle.less_equal)


class NotEqual(_Compare):
    """``x != y`` with broadcasting (a bool tensor)."""

    function = staticmethod(paddle.not_equal)


class Pow(_Compare):
    """``x ** y`` with broadcasting."""

    function = staticmethod(paddle.pow)


class Maximum(_Compare):
    """The elementwise maximum of ``x`` and ``y`` with broadcasting."""

    function = staticmethod(paddle.maximum)


class Addcmul(Primitive):
    """``Addcmul()(input_data, x1, x2, value)``: ``input_data + value * x1 * x2``."""

    def compute(
        self, input_data: paddle.Tensor, x1: paddle.Tensor, x2: paddle.Tensor, value: Any
    ) -> paddle.Tensor:
        return input_data + value * (x1 * x2)


class Log(_Unary):
    function = staticmethod(paddle.log)


class Rsqrt(_Unary):
    """``1 / sqrt(x)``."""

    function = staticmethod(paddle.rsqrt)


class SiLU(_Unary):
    """``x * sigmoid(x)``."""

    function = staticmethod(F.silu)


class ReduceMax(_Reduce):
    """``ReduceMax(keep_dims=False)(x, axis=())``; the gradient goes to every maximal element."""

    function = staticmethod(paddle.max)


class StridedSlice(Primitive):
    """``StridedSlice()(x, begin, end, strides)``: ``x[b0:e0:s0, b1:e1:s1, ...]``.

    The masks are not provided (they raise when not 0): MindSpore 2.10 on the CPU slices as
    they say in the forward, but its gradient of a masked slice lands where the unmasked
    ``begin`` points (recorded), which is not the slice's derivative.
    """

    def setup(self, begin_mask: int = 0, end_mask: int = 0, ellipsis_mask: int = 0, new_axis_mask: int = 0,
              shrink_axis_mask: int = 0) -> None:
        masks = {"begin_mask": begin_mask, "end_mask": end_mask, "ellipsis_mask": ellipsis_mask,
                 "new_axis_mask": new_axis_mask, "shrink_axis_mask": shrink_axis_mask}
        for name, value in masks.items():
            if value:
                raise not_provided(f"StridedSlice({name}={value})", "slice with explicit begin/end instead")
            self.add_prim_attr(name, value)

    def compute(self, x: paddle.Tensor, begin: tuple, end: tuple, strides: tuple) -> paddle.Tensor:
        if not len(begin) == len(end) == len(strides):
            raise ValueError(
                f"For 'StridedSlice', 'begin', 'end' and 'strides' must have the same length, "
                f"but got {len(begin)}, {len(end)} and {len(strides)}."
            )
        axes = list(range(len(begin)))
        return paddle.strided_slice(x, axes, [int(b) for b in begin], [int(e) for e in end],
                                    [int(s) for s in strides])


class MoveTo(Primitive):
    """``MoveTo()(input, to="CPU", blocking=True)``: constructed as in MindSpore (mindformers
    builds one at import); calling it raises, since MindSpore runs it in graph mode only and
    this layer has one device."""

    def compute(self, *args: Any, **kwargs: Any) -> Any:
        raise not_provided(
            "MoveTo (a device copy, graph mode only in MindSpore)",
            "the layer runs on one device; drop the copy",
        )
