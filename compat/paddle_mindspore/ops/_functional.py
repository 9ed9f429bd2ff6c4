"""Functional forms (``ops.relu``, ``ops.dropout``, ...) of the operators."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import paddle
import paddle.nn.functional as F

from .._dtype import to_paddle_dtype
from ._nn import relu as _relu
from ._operands import axis_list

__all__ = [
    "relu", "softmax", "dropout", "stop_gradient", "matmul", "transpose", "reshape", "expand_dims",
    "ones", "zeros", "ones_like", "zeros_like", "mean", "sum",
]


def relu(input: paddle.Tensor) -> paddle.Tensor:  # noqa: A002 (MindSpore's name)
    return _relu(input)


def softmax(input: paddle.Tensor, axis: int = -1) -> paddle.Tensor:  # noqa: A002
    return F.softmax(input, axis=axis)


def dropout(input: paddle.Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
            seed: int | None = None) -> paddle.Tensor:
    """``ops.dropout(input, p=0.5, training=True, seed=None)``; a given ``seed`` fixes the mask."""
    if not 0 <= p <= 1:
        raise ValueError(f"For 'dropout', the 'p' must be in range [0, 1], but got {p}.")
    if not training or p == 0:
        return input
    if seed is None:
        return F.dropout(input, p=p, training=True, mode="upscale_in_train")
    return paddle._C_ops.dropout(input, None, p, False, "upscale_in_train", seed, True)


def stop_gradient(input: Any) -> Any:  # noqa: A002
    return input.detach() if isinstance(input, paddle.Tensor) else input


def matmul(input: paddle.Tensor, other: paddle.Tensor) -> paddle.Tensor:  # noqa: A002
    return paddle.matmul(input, other)


def transpose(input: paddle.Tensor, input_perm: Sequence[int]) -> paddle.Tensor:  # noqa: A002
    return paddle.transpose(input, list(input_perm))


def reshape(input: paddle.Tensor, shape: Sequence[int]) -> paddle.Tensor:  # noqa: A002
    return paddle.reshape(input, list(shape))


def expand_dims(input_x: paddle.Tensor, axis: int) -> paddle.Tensor:
    return paddle.unsqueeze(input_x, axis)


def _shape(shape: Any) -> list[int]:
    return [shape] if isinstance(shape, int) else list(shape)


def ones(shape: Any, dtype: Any = None) -> paddle.Tensor:
    return paddle.ones(_shape(shape), to_paddle_dtype(dtype) or "float32")


def zeros(shape: Any, dtype: Any = None) -> paddle.Tensor:
    return paddle.zeros(_shape(shape), to_paddle_dtype(dtype) or "float32")


def ones_like(input: paddle.Tensor, dtype: Any = None) -> paddle.Tensor:  # noqa: A002
    return paddle.ones_like(input, dtype=to_paddle_dtype(dtype))


def zeros_like(input: paddle.Tensor, dtype: Any = None) -> paddle.Tensor:  # noqa: A002
    return paddle.zeros_like(input, dtype=to_paddle_dtype(dtype))


def mean(input: paddle.Tensor, axis: Any = None, keep_dims: bool = False) -> paddle.Tensor:  # noqa: A002
    return paddle.mean(input, axis=axis_list(axis), keepdim=keep_dims)


def sum(input: paddle.Tensor, dim: Any = None, keepdim: bool = False, *,  # noqa: A001,A002
        dtype: Any = None) -> paddle.Tensor:
    """``ops.sum(input, dim=None, keepdim=False, *, dtype=None)``."""
    if dtype is not None:
        input = input.astype(to_paddle_dtype(dtype))  # noqa: A001
    return paddle.sum(input, axis=axis_list(dim), keepdim=keepdim)
