"""``mindspore.common.initializer``: the initialisers the ported programs use.

Values are drawn with numpy's global generator, as MindSpore does (``set_seed`` seeds it), and
materialised at once (MindSpore may defer the allocation; the values are the same kind of
draw, not the same bits, since the generators differ).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import paddle

from ._dtype import to_numpy_dtype

__all__ = [
    "Initializer", "Zero", "One", "Constant", "Normal", "Uniform", "TruncatedNormal",
    "HeUniform", "HeNormal", "XavierUniform", "initializer",
]


class Initializer:
    """Base class: ``__call__(shape) -> numpy array``."""

    def sample(self, shape: tuple[int, ...]) -> np.ndarray:
        raise NotImplementedError

    def __call__(self, shape: Sequence[int]) -> np.ndarray:
        return self.sample(tuple(int(s) for s in shape))


class Zero(Initializer):
    def sample(self, shape):
        return np.zeros(shape)


class One(Initializer):
    def sample(self, shape):
        return np.ones(shape)


class Constant(Initializer):
    def __init__(self, value: float):
        self.value = value

    def sample(self, shape):
        return np.full(shape, self.value)


class Normal(Initializer):
    def __init__(self, sigma: float = 0.01, mean: float = 0.0):
        self.sigma, self.mean = sigma, mean

    def sample(self, shape):
        return np.random.normal(self.mean, self.sigma, shape)


class Uniform(Initializer):
    def __init__(self, scale: float = 0.07):
        self.scale = scale

    def sample(self, shape):
        return np.random.uniform(-self.scale, self.scale, shape)


class TruncatedNormal(Initializer):
    def __init__(self, sigma: float = 0.01, mean: float = 0.0, a: float = -2.0, b: float = 2.0):
        self.sigma, self.mean, self.a, self.b = sigma, mean, a, b

    def sample(self, shape):
        out = np.random.normal(self.mean, self.sigma, shape)
        low, high = self.mean + self.a * self.sigma, self.mean + self.b * self.sigma
        bad = (out < low) | (out > high)
        while bad.any():
            out[bad] = np.random.normal(self.mean, self.sigma, int(bad.sum()))
            bad = (out < low) | (out > high)
        return out


def _fans(shape: tuple[int, ...]) -> tuple[int, int]:
    if len(shape) < 2:
        raise ValueError(f"fan in and fan out need at least 2 dimensions, got shape {list(shape)}")
    receptive = math.prod(shape[2:]) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def _gain(nonlinearity: str, negative_slope: float) -> float:
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity in ("linear", "sigmoid", "conv2d"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    raise ValueError(f"unsupported nonlinearity {nonlinearity!r}")


class HeUniform(Initializer):
    def __init__(self, negative_slope: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"):
        self.slope, self.mode, self.nonlinearity = negative_slope, mode, nonlinearity

    def sample(self, shape):
        fan_in, fan_out = _fans(shape)
        fan = fan_in if self.mode == "fan_in" else fan_out
        bound = math.sqrt(3.0) * _gain(self.nonlinearity, self.slope) / math.sqrt(fan)
        return np.random.uniform(-bound, bound, shape)


class HeNormal(Initializer):
    def __init__(self, negative_slope: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"):
        self.slope, self.mode, self.nonlinearity = negative_slope, mode, nonlinearity

    def sample(self, shape):
        fan_in, fan_out = _fans(shape)
        fan = fan_in if self.mode == "fan_in" else fan_out
        return np.random.normal(0.0, _gain(self.nonlinearity, self.slope) / math.sqrt(fan), shape)


class XavierUniform(Initializer):
    def __init__(self, gain: float = 1):
        self.gain = gain

    def sample(self, shape):
        fan_in, fan_out = _fans(shape)
        bound = self.gain * math.sqrt(6.0 / (fan_in + fan_out))
        return np.random.uniform(-bound, bound, shape)


_NAMES = {
    "zeros": Zero, "zero": Zero, "ones": One, "one": One, "normal": Normal, "uniform": Uniform,
    "truncatednormal": TruncatedNormal, "truncated_normal": TruncatedNormal,
    "heuniform": HeUniform, "he_uniform": HeUniform, "henormal": HeNormal, "he_normal": HeNormal,
    "xavieruniform": XavierUniform, "xavier_uniform": XavierUniform,
}


def _resolve(init: Any) -> Initializer:
    if isinstance(init, Initializer):
        return init
    if isinstance(init, str):
        cls = _NAMES.get(init.lower())
        if cls is None:
            raise ValueError(
                f"initializer {init!r} is not provided by paddle_mindspore; "
                f"supported names: {sorted(_NAMES)}"
            )
        return cls()
    if isinstance(init, bool) or not isinstance(init, int | float):
        raise TypeError(f"Unsupported init type {type(init).__name__}")
    return Constant(init)


def initializer(init: Any, shape: Sequence[int] | int, dtype: Any = paddle.float32) -> paddle.Tensor:
    """``mindspore.common.initializer.initializer``: a tensor of ``shape`` filled by ``init``.

    ``init`` is an :class:`Initializer`, a name such as ``'ones'``/``'normal'``/``'he_uniform'``,
    a number, or a tensor (returned as is when its shape matches).
    """
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if isinstance(init, paddle.Tensor):
        if tuple(init.shape) != shape:
            raise ValueError(f"The shape of init {list(init.shape)} does not match shape {list(shape)}")
        return init
    array = _resolve(init)(shape).astype(to_numpy_dtype(dtype))
    return paddle.to_tensor(array)
