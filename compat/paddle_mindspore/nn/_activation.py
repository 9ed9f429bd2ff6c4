"""Activation and normalisation cells: GELU, SiLU, Sigmoid, Tanh, ReLU6, HSigmoid, HSwish, Softmax,
LogSoftmax, LayerNorm."""

from __future__ import annotations

from typing import Any

import paddle
import paddle.nn.functional as F

from .._cell import Cell
from .._dtype import float32
from ..ops._more_primitives import LayerNorm as LayerNormOp
from ._params import make_parameter

__all__ = ["GELU", "SiLU", "Sigmoid", "Tanh", "ReLU6", "HSigmoid", "HSwish", "Softmax", "LogSoftmax",
           "LayerNorm"]


class GELU(Cell):
    """``nn.GELU(approximate=True)``: MindSpore's default is the tanh approximation."""

    def __init__(self, approximate: bool = True):
        super().__init__()
        self.approximate = bool(approximate)

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        return F.gelu(x, approximate=self.approximate)


class SiLU(Cell):
    """``nn.SiLU()``: ``x * sigmoid(x)``."""

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        return F.silu(x)


class Sigmoid(Cell):
    """``nn.Sigmoid()``: ``1 / (1 + exp(-x))``."""

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        return F.sigmoid(x)


class Tanh(Cell):
    """``nn.Tanh()``."""

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        return paddle.tanh(x)


class ReLU6(Cell):
    """``nn.ReLU6()``: ``min(max(0, x), 6)``."""

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        return F.relu6(x)


class HSigmoid(Cell):
    """``nn.HSigmoid()``: ``relu6(x + 3) / 6``."""

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        return F.hardsigmoid(x, slope=1 / 6, offset=0.5)


class HSwish(Cell):
    """``nn.HSwish()``: ``x * relu6(x + 3) / 6``."""

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        return F.hardswish(x)


class LogSoftmax(Cell):
    """``nn.LogSoftmax(axis=-1)``."""

    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = axis

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        return F.log_softmax(x, axis=self.axis)


class Softmax(Cell):
    """``nn.Softmax(axis=-1)``."""

    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = axis

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        return F.softmax(x, axis=self.axis)


class LayerNorm(Cell):
    """``nn.LayerNorm(normalized_shape, begin_norm_axis=-1, begin_params_axis=-1, gamma_init='ones',
    beta_init='zeros', epsilon=1e-7)``.


    Normalises over the axes from ``begin_norm_axis`` on (biased variance); ``gamma`` and
    ``beta`` (MindSpore's names) have shape ``normalized_shape`` and apply from
    ``begin_params_axis`` on. Note MindSpore's default ``epsilon`` is 1e-7 (Paddle's 1e-5).
    """

    def __init__(self, normalized_shape: Any, begin_norm_axis: int = -1, begin_params_axis: int = -1,
                 gamma_init: Any = "ones", beta_init: Any = "zeros", epsilon: float = 1e-7,
                 dtype: Any = float32):
        super().__init__()
        if not isinstance(normalized_shape, list | tuple):
            raise TypeError(f"For 'LayerNorm', the type of 'normalized_shape' must be tuple[int] or "
                            f"list[int], but got {type(normalized_shape).__name__}.")
        self.normalized_shape = list(normalized_shape)
        self.begin_norm_axis, self.begin_params_axis = begin_norm_axis, begin_params_axis
        self.epsilon = epsilon
        self.layer_norm = LayerNormOp(begin_norm_axis, begin_params_axis, epsilon)  # MindSpore's attribute
        self.gamma = make_parameter(gamma_init, self.normalized_shape, dtype, "layernorm.gamma")
        self.beta = make_parameter(beta_init, self.normalized_shape, dtype, "layernorm.beta")

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        ndim = x.ndim
        norm_axis = self.begin_norm_axis % ndim
        params_axis = self.begin_params_axis % ndim
        if norm_axis == params_axis:
            return F.layer_norm(x, x.shape[norm_axis:], paddle.flatten(self.gamma), paddle.flatten(self.beta),
                                self.epsilon)
        axes = list(range(norm_axis, ndim))
        mean = paddle.mean(x, axis=axes, keepdim=True)
        var = paddle.mean(paddle.square(x - mean), axis=axes, keepdim=True)
        return (x - mean) / paddle.sqrt(var + self.epsilon) * self.gamma + self.beta
