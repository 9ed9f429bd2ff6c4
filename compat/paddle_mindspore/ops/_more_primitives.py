"""Operator classes over the functional forms: ``Sort``, ``Unstack``, ``OneHot``, ``Zeros``,
``Ones``, ``ZerosLike``, ``OnesLike``, ``Tile``, ``Shape``, ``Identity``, ``Square``, ``Sign``,
``Reciprocal``, ``Pad``, ``L2Normalize``, ``LpNorm``, ``ResizeBilinearV2``, ``ResizeNearestNeighbor``,
``LayerNorm``."""

from __future__ import annotations

from typing import Any

import paddle

from .._dtype import to_paddle_dtype
from .._primitive import Primitive
from . import _functional_nn as nnf
from . import _index as idx
from ._functional_array import tile

__all__ = ["Sort", "Unstack", "OneHot", "Zeros", "Ones", "ZerosLike", "OnesLike", "Tile", "Shape", "Identity",
           "Square", "Sign", "Reciprocal", "Pad", "L2Normalize", "LpNorm", "ResizeBilinearV2",
           "ResizeNearestNeighbor", "LayerNorm"]


class Sort(Primitive):
    """``Sort(axis=-1, descending=False)(x) -> (values, int32 indices)``."""

    def setup(self, axis: int = -1, descending: bool = False) -> None:
        self.axis, self.descending = axis, descending

    def compute(self, x: paddle.Tensor) -> tuple[paddle.Tensor, paddle.Tensor]:
        return idx.sort(x, self.axis, self.descending)


class Unstack(Primitive):
    """``Unstack(axis=0, num=None)(x)``: a tuple of slices."""

    def setup(self, axis: int = 0, num: int | None = None) -> None:
        self.axis = axis

    def compute(self, x: paddle.Tensor) -> tuple[paddle.Tensor, ...]:
        return idx.unstack(x, self.axis)


class OneHot(Primitive):
    """``OneHot(axis=-1)(indices, depth, on_value, off_value)``."""

    def setup(self, axis: int = -1) -> None:
        self.axis = axis

    def compute(self, indices: paddle.Tensor, depth: int, on_value: Any, off_value: Any) -> paddle.Tensor:
        return nnf.one_hot(indices, depth, on_value, off_value, self.axis)


class _Fill(Primitive):
    value = 0

    def compute(self, size: Any, dtype: Any) -> paddle.Tensor:
        shape = [size] if isinstance(size, int) else list(size)
        return paddle.full(shape, self.value, dtype=to_paddle_dtype(dtype))


class Zeros(_Fill):
    """``Zeros()(shape, dtype)``."""


class Ones(_Fill):
    """``Ones()(shape, dtype)``."""

    value = 1


class ZerosLike(Primitive):
    def compute(self, x: paddle.Tensor) -> paddle.Tensor:
        return paddle.zeros_like(x)


class OnesLike(Primitive):
    def compute(self, x: paddle.Tensor) -> paddle.Tensor:
        return paddle.ones_like(x)


class Tile(Primitive):
    """``Tile()(x, multiples)``."""

    def compute(self, x: paddle.Tensor, multiples: Any) -> paddle.Tensor:
        return tile(x, multiples)


class Shape(Primitive):
    """``Shape()(x)``: a tuple of ints."""

    def compute(self, x: paddle.Tensor) -> tuple[int, ...]:
        return tuple(x.shape)


class Identity(Primitive):
    def compute(self, x: Any) -> Any:
        return x


class Square(Primitive):
    def compute(self, x: paddle.Tensor) -> paddle.Tensor:
        return paddle.square(x)


class Sign(Primitive):
    def compute(self, x: paddle.Tensor) -> paddle.Tensor:
        return paddle.sign(x)


class Reciprocal(Primitive):
    def compute(self, x: paddle.Tensor) -> paddle.Tensor:
        return paddle.reciprocal(x)


class Pad(Primitive):
    """``Pad(paddings)(x)``: ``paddings[d] = (before, after)`` for each dimension, zeros."""

    def setup(self, paddings: Any) -> None:
        self.paddings = tuple(tuple(p) for p in paddings)

    def compute(self, x: paddle.Tensor) -> paddle.Tensor:
        flat = [v for pair in reversed(self.paddings) for v in pair]
        return nnf.pad(x, flat)


class L2Normalize(Primitive):
    """``L2Normalize(axis=0, epsilon=1e-4)(x)``."""

    def setup(self, axis: Any = 0, epsilon: float = 1e-4) -> None:
        self.axis, self.epsilon = axis, epsilon

    def compute(self, x: paddle.Tensor) -> paddle.Tensor:
        return nnf.l2_normalize(x, self.axis, self.epsilon)


class LpNorm(Primitive):
    """``LpNorm(axis, p=2, keep_dims=False, epsilon=1e-12)(x)``."""

    def setup(self, axis: Any, p: int = 2, keep_dims: bool = False, epsilon: float = 1e-12) -> None:
        self.axis, self.p, self.keep_dims, self.epsilon = axis, p, keep_dims, epsilon

    def compute(self, x: paddle.Tensor) -> paddle.Tensor:
        return idx.norm(x, self.axis, self.p, self.keep_dims, self.epsilon)


class ResizeBilinearV2(Primitive):
    """``ResizeBilinearV2(align_corners=False, half_pixel_centers=False)(x, size)``."""

    def setup(self, align_corners: bool = False, half_pixel_centers: bool = False) -> None:
        self.align_corners, self.half_pixel_centers = align_corners, half_pixel_centers

    def compute(self, x: paddle.Tensor, size: Any) -> paddle.Tensor:
        size = size.tolist() if isinstance(size, paddle.Tensor) else size
        return nnf.resize_bilinear_legacy(x, size, self.align_corners, self.half_pixel_centers)


class ResizeNearestNeighbor(Primitive):
    """``ResizeNearestNeighbor(size, align_corners=False)(x)``."""

    def setup(self, size: Any, align_corners: bool = False, half_pixel_centers: bool = False) -> None:
        if half_pixel_centers:
            raise nnf.not_provided("ops.ResizeNearestNeighbor(half_pixel_centers=True)")
        self.size, self.align_corners = size, align_corners

    def compute(self, x: paddle.Tensor) -> paddle.Tensor:
        return nnf.resize_nearest(x, self.size, self.align_corners)


class LayerNorm(Primitive):
    """``LayerNorm(begin_norm_axis=1, begin_params_axis=1, epsilon=1e-7)(x, gamma, beta)`` ->
    ``(y, mean, variance)``: normalised over the axes from ``begin_norm_axis`` on (biased
    variance); ``mean`` and ``variance`` keep those axes as size 1."""

    def setup(self, begin_norm_axis: int = 1, begin_params_axis: int = 1, epsilon: float = 1e-7) -> None:
        self.begin_norm_axis, self.begin_params_axis = begin_norm_axis, begin_params_axis
        self.epsilon = epsilon

    def compute(self, x: paddle.Tensor, gamma: paddle.Tensor, beta: paddle.Tensor) -> tuple:
        axes = list(range(self.begin_norm_axis % x.ndim, x.ndim))
        mean = paddle.mean(x, axis=axes, keepdim=True)
        variance = paddle.mean(paddle.square(x - mean), axis=axes, keepdim=True)
        y = (x - mean) / paddle.sqrt(variance + self.epsilon) * gamma + beta
        return y, mean, variance
