"""Parameter creation shared by the layers (MindSpore's default initialisers)."""

from __future__ import annotations

import math
from typing import Any

import paddle
from paddle.utils import unique_name

from .._cell_names import DEFAULT_NAME
from .._initializer import HeUniform, Uniform, initializer
from .._tensor import Parameter

__all__ = ["make_parameter", "default_weight_init", "default_bias_init"]


def make_parameter(init: Any, shape: list[int], dtype: Any, name: str, requires_grad: bool = True) -> Any:
    """A parameter initialised by ``init``, with a unique Paddle name derived from ``name``."""
    value = initializer(init, shape, dtype)
    param = Parameter(value, name=unique_name.generate(name), requires_grad=requires_grad)
    param._ms_name = DEFAULT_NAME  # named by the cell attribute that takes it (see _cell_names)
    return param


def default_weight_init() -> HeUniform:
    """MindSpore 2.x default for Dense/Conv weights: ``HeUniform(math.sqrt(5))``."""
    return HeUniform(math.sqrt(5))


def default_bias_init(fan_in: int) -> Uniform:
    """MindSpore 2.x default for Dense/Conv biases: ``Uniform(1 / sqrt(fan_in))``."""
    return Uniform(1 / math.sqrt(fan_in)) if fan_in > 0 else Uniform(0.0)


def register_moving(layer: paddle.nn.Layer, name: str, init: Any, shape: list[int], dtype: Any) -> None:
    """A running statistic: a persistable buffer (MindSpore: a Parameter with requires_grad=False)."""
    layer.register_buffer(name, initializer(init, shape, dtype), persistable=True)
    buffer = layer._buffers[name]
    buffer._ms_parameter = True  # a ParameterTuple takes it (mindspore._tensor)
    buffer._ms_name = name  # MindSpore's name until a parent cell prefixes it (_cell_names.adopt)
