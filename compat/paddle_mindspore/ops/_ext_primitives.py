"""The ``*Ext`` and small generated primitives mindformers' training-graph models use
(``mindspore.ops.auto_generate``): arithmetic with ``alpha``, reductions, ``Cos``/``Sin``,
``Outer``, ``Split``, ``StackExt``, ``OneHotExt``, ``ArgMaxWithValue``, ``Minimum``,
``ZerosLikeExt`` and ``InplaceCopy``. Each computes what MindSpore's kernel computes, its
gradient included (Paddle's autograd through the same arithmetic).
"""

from __future__ import annotations

from typing import Any

import paddle
import paddle.nn.functional as F

from .._dtype import to_paddle_dtype
from .._primitive import Primitive
from ._llm_primitives import _Compare
from ._math import _Unary
from ._operands import axis_list, tensor_operands

__all__ = [
    "AddExt", "SubExt", "Muls", "SumExt", "Cos", "Sin", "Outer", "Split", "StackExt", "OneHotExt",
    "ArgMaxWithValue", "Minimum", "ZerosLikeExt", "InplaceCopy",
]


class AddExt(Primitive):
    """``AddExt()(input, other, alpha=1)``: ``input + alpha * other`` with broadcasting."""

    def compute(self, input: Any, other: Any, alpha: Any = 1) -> paddle.Tensor:
        x, y = tensor_operands(self.name, input, other)
        return x + y if alpha == 1 else x + y * alpha


class SubExt(Primitive):
    """``SubExt()(input, other, alpha=1)``: ``input - alpha * other`` with broadcasting."""

    def compute(self, input: Any, other: Any, alpha: Any = 1) -> paddle.Tensor:
        x, y = tensor_operands(self.name, input, other)
        return x - y if alpha == 1 else x - y * alpha


class Muls(Primitive):
    """``Muls()(input, other)``: ``input`` times the scalar ``other``."""

    def compute(self, input: paddle.Tensor, other: Any) -> paddle.Tensor:
        x, y = tensor_operands(self.name, input, other)
        return x * y


class SumExt(Primitive):
    """``SumExt()(input, dim=None, keepdim=False, dtype=None)``: the sum over ``dim`` (every
    axis for ``None``), in ``dtype`` when given."""

    def compute(self, input: paddle.Tensor, dim: Any = None, keepdim: bool = False,
                dtype: Any = None) -> paddle.Tensor:
        x = input if dtype is None else input.astype(to_paddle_dtype(dtype))
        axis = None if dim is None else axis_list(dim)
        return paddle.sum(x, axis=axis or None, keepdim=keepdim)


class Cos(_Unary):
    function = staticmethod(paddle.cos)


class Sin(_Unary):
    function = staticmethod(paddle.sin)


class Outer(Primitive):
    """``Outer()(input, vec2)``: ``input[i] * vec2[j]`` for 1-D ``input`` and ``vec2``."""

    def compute(self, input: paddle.Tensor, vec2: paddle.Tensor) -> paddle.Tensor:
        if input.ndim != 1 or vec2.ndim != 1:
            raise ValueError(f"For 'Outer', 'input' and 'vec2' must be 1-D, but got {input.ndim}-D "
                             f"and {vec2.ndim}-D.")
        return input.unsqueeze(1) * vec2.unsqueeze(0)


class Split(Primitive):
    """``Split(axis=0, output_num=1)(input_x)``: ``output_num`` equal pieces along ``axis``."""

    def setup(self, axis: int = 0, output_num: int = 1) -> None:
        self.axis, self.output_num = axis, output_num
        self.add_prim_attr("axis", axis)
        self.add_prim_attr("output_num", output_num)

    def compute(self, input_x: paddle.Tensor) -> tuple[paddle.Tensor, ...]:
        size = input_x.shape[self.axis % input_x.ndim]
        if size % self.output_num:
            raise ValueError(f"For 'Split', the size of dimension {self.axis} ({size}) must be "
                             f"divisible by 'output_num' {self.output_num}.")
        return tuple(paddle.split(input_x, self.output_num, axis=self.axis))


class StackExt(Primitive):
    """``StackExt(dim=0)(tensors)``: the tensors (same shape) stacked along a new ``dim``."""

    def setup(self, dim: int = 0) -> None:
        self.dim = dim
        self.add_prim_attr("dim", dim)

    def compute(self, tensors: Any) -> paddle.Tensor:
        return paddle.stack(list(tensors), axis=self.dim)


class OneHotExt(Primitive):
    """``OneHotExt(axis=-1)(tensor, num_classes, on_value, off_value)``: ``on_value`` where the
    new ``axis`` equals the index, ``off_value`` elsewhere (their dtype)."""

    def setup(self, axis: int = -1) -> None:
        self.axis = axis
        self.add_prim_attr("axis", axis)

    def compute(self, tensor: paddle.Tensor, num_classes: int, on_value: Any,
                off_value: Any) -> paddle.Tensor:
        on, off = tensor_operands(self.name, on_value, off_value)
        hot = F.one_hot(tensor.astype("int64"), int(num_classes)).astype(on.dtype)
        if self.axis != -1:
            hot = paddle.moveaxis(hot, -1, self.axis)
        return hot * on + (1 - hot) * off


class ArgMaxWithValue(Primitive):
    """``ArgMaxWithValue(axis=0, keep_dims=False)(input)``: ``(index, values)`` of the maximum
    along ``axis``; the gradient flows to the maximum's position."""

    def setup(self, axis: int = 0, keep_dims: bool = False) -> None:
        self.axis, self.keep_dims = axis, keep_dims
        self.add_prim_attr("axis", axis)
        self.add_prim_attr("keep_dims", keep_dims)

    def compute(self, input: paddle.Tensor) -> tuple[paddle.Tensor, paddle.Tensor]:
        index = paddle.argmax(input, axis=self.axis, keepdim=True)
        values = paddle.take_along_axis(input, index, axis=self.axis)
        if not self.keep_dims:
            index, values = index.squeeze(self.axis), values.squeeze(self.axis)
        return index, values


class Minimum(_Compare):
    """The elementwise minimum of ``input`` and ``other`` with broadcasting."""

    function = staticmethod(paddle.minimum)


class ZerosLikeExt(Primitive):
    """``ZerosLikeExt()(input, dtype=None)``: zeros of ``input``'s shape (in ``dtype`` when given)."""

    def compute(self, input: paddle.Tensor, dtype: Any = None) -> paddle.Tensor:
        return paddle.zeros(input.shape, input.dtype if dtype is None else to_paddle_dtype(dtype))


class InplaceCopy(Primitive):
    """``InplaceCopy()(input, src, non_blocking=False)``: ``src`` (broadcast, cast) written into
    ``input``, which is returned."""

    def compute(self, input: paddle.Tensor, src: Any, non_blocking: bool = False) -> paddle.Tensor:
        value = src if isinstance(src, paddle.Tensor) else paddle.to_tensor(src)
        value = paddle.broadcast_to(value.astype(input.dtype), input.shape)
        paddle.assign(value, output=input)
        return input
