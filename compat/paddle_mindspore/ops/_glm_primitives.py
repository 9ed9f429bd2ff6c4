"""Primitives that mindformers' GLM2 uses: ``SplitWithSize``, ``Stack``, ``Tril``, ``Equal``
and ``Less`` compute what MindSpore's kernels compute (gradients included); the inference
kernels GLM2's attention cell builds even for training (``ApplyRotaryPosEmb``,
``PagedAttention``, ``PagedAttentionMask``, ``ReshapeAndCache``) construct as in MindSpore
and raise when called, since this layer has no paged key/value cache.
"""

from __future__ import annotations

from typing import Any

import paddle

from .._primitive import Primitive
from .._validate import not_provided
from ._llm_primitives import _Compare

__all__ = [
    "SplitWithSize",
    "Stack",
    "Tril",
    "Equal",
    "Less",
    "ApplyRotaryPosEmb",
    "PagedAttention",
    "PagedAttentionMask",
    "ReshapeAndCache",
]


class SplitWithSize(Primitive):
    """``SplitWithSize()(input, split_size, dim=0)``: a tuple of pieces along ``dim`` whose
    sizes are ``split_size`` (they must add up to the dimension's size)."""

    def compute(self, input: paddle.Tensor, split_size: Any, dim: int = 0) -> tuple[paddle.Tensor, ...]:
        sizes = [int(s) for s in split_size]
        axis = dim % input.ndim
        if sum(sizes) != input.shape[axis]:
            raise ValueError(
                f"For 'SplitWithSize', the sum of 'split_size' {sizes} must equal the size of "
                f"dimension {dim} of the input ({input.shape[axis]})."
            )
        return tuple(paddle.split(input, sizes, axis=axis))


class Stack(Primitive):
    """``Stack(axis=0)(tensors)``: the tensors (same shape) stacked along a new ``axis``."""

    def setup(self, axis: int = 0) -> None:
        self.axis = axis
        self.add_prim_attr("axis", axis)

    def compute(self, x: Any) -> paddle.Tensor:
        return paddle.stack(list(x), axis=self.axis)


class Tril(Primitive):
    """``Tril(diagonal=0)(x)``: ``x`` with the elements above the ``diagonal``-th diagonal of
    its last two dimensions set to zero."""

    def setup(self, diagonal: int = 0) -> None:
        self.diagonal = diagonal
        self.add_prim_attr("diagonal", diagonal)

    def compute(self, x: paddle.Tensor) -> paddle.Tensor:
        if x.dtype in (paddle.uint8, paddle.bool):  # Paddle's tril kernel takes neither
            return paddle.tril(x.astype("int32"), self.diagonal).astype(x.dtype)
        return paddle.tril(x, self.diagonal)


class Equal(_Compare):
    """``x == y`` with broadcasting (a bool tensor)."""

    function = staticmethod(paddle.equal)


class Less(_Compare):
    """``x < y`` with broadcasting (a bool tensor)."""

    function = staticmethod(paddle.less_than)


class _InferenceKernel(Primitive):
    """An Ascend inference kernel: constructs (mindformers builds its cells for training
    too) and raises when called."""

    def setup(self, *args: Any, **kwargs: Any) -> None:
        self.init_args = args
        self.init_kwargs = kwargs

    def compute(self, *args: Any, **kwargs: Any) -> Any:
        raise not_provided(
            f"mindspore.ops.{self.name} called",
            "it is an inference kernel over a paged key/value cache (Ascend); train with "
            "use_past=False, which never calls it",
        )


class ApplyRotaryPosEmb(_InferenceKernel):
    """``ApplyRotaryPosEmb(cos_format=0)``: raises when called."""

    def setup(self, cos_format: int = 0) -> None:
        self.cos_format = cos_format
        self.add_prim_attr("cos_format", cos_format)


class PagedAttention(_InferenceKernel):
    """``PagedAttention(head_num, scale_value, kv_head_num, ...)``: raises when called."""

    def setup(self, head_num: int, scale_value: float, kv_head_num: int,
              kv_cache_quant_mode: str = "DEFAULT", mask_mode: str = "MASK_DEFAULT",
              mla_v_dim: int = 0) -> None:
        self.head_num, self.scale_value, self.kv_head_num = head_num, scale_value, kv_head_num


class PagedAttentionMask(_InferenceKernel):
    """``PagedAttentionMask(head_num, scale_value, kv_head_num, ...)``: raises when called."""

    def setup(self, head_num: int, scale_value: float, kv_head_num: int,
              kv_cache_quant_mode: str = "DEFAULT") -> None:
        self.head_num, self.scale_value, self.kv_head_num = head_num, scale_value, kv_head_num


class ReshapeAndCache(_InferenceKernel):
    """``ReshapeAndCache()``: raises when called."""

    def setup(self) -> None:
        pass
