"""``mindspore.mint`` functions mindformers' language models use, in mint's (PyTorch-shaped)
signatures."""

from __future__ import annotations

from typing import Any

import paddle

from .._dtype import to_paddle_dtype

__all__ = ["argmax", "zeros", "pow", "log", "exp", "sin", "cos", "ceil", "cumsum"]


def argmax(input: paddle.Tensor, dim: int | None = None, keepdim: bool = False) -> paddle.Tensor:
    """Indices (int64) of the maxima along ``dim``, or of the flattened input when ``dim`` is None."""
    return paddle.argmax(input, axis=dim, keepdim=keepdim if dim is not None else False)


def zeros(size: Any, *, dtype: Any = None) -> paddle.Tensor:
    """A tensor of zeros; float32 unless ``dtype`` says otherwise."""
    shape = [size] if isinstance(size, int) else list(size)
    return paddle.zeros(shape, dtype=to_paddle_dtype(dtype) or paddle.float32)


def pow(input: Any, exponent: Any) -> paddle.Tensor:
    return paddle.pow(input, exponent)


def log(input: paddle.Tensor) -> paddle.Tensor:
    return paddle.log(input)


def exp(input: paddle.Tensor) -> paddle.Tensor:
    return paddle.exp(input)


def sin(input: paddle.Tensor) -> paddle.Tensor:
    return paddle.sin(input)


def cos(input: paddle.Tensor) -> paddle.Tensor:
    return paddle.cos(input)


def ceil(input: paddle.Tensor) -> paddle.Tensor:
    return paddle.ceil(input)


def cumsum(input: paddle.Tensor, dim: int, dtype: Any = None) -> paddle.Tensor:
    return paddle.cumsum(input, axis=dim, dtype=to_paddle_dtype(dtype))
