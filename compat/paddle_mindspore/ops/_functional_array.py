"""Functional array operators of ``mindspore.ops`` (MindSpore 2.10 signatures and semantics).

Checked against real MindSpore in compat/tests/test_ms_recorded_cases.py; the points where
MindSpore differs from Paddle: ``split`` takes a *chunk size* (Paddle: a number of chunks),
``arange`` infers int64 from integer bounds and float32 otherwise, ``tile`` prepends axes
when ``dims`` is longer than the input's rank, ``broadcast_to`` keeps a ``-1`` dimension.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import paddle

from .._dtype import to_paddle_dtype
from .._surface.shape import split_sections
from ._operands import axis_list

__all__ = ["concat", "cat", "stack", "split", "permute", "cast", "arange", "where", "masked_fill",
           "tile", "broadcast_to", "cumsum", "squeeze", "bmm"]


def concat(tensors: Sequence[paddle.Tensor], axis: int = 0) -> paddle.Tensor:
    return paddle.concat(list(tensors), axis=axis)


def cat(tensors: Sequence[paddle.Tensor], axis: int = 0) -> paddle.Tensor:
    return paddle.concat(list(tensors), axis=axis)


def stack(tensors: Sequence[paddle.Tensor], axis: int = 0) -> paddle.Tensor:
    return paddle.stack(list(tensors), axis=axis)


def split(tensor: paddle.Tensor, split_size_or_sections: int | Sequence[int], axis: int = 0) -> tuple:
    """An int is the size of each chunk (the last may be smaller); a list gives every size."""
    return split_sections(tensor, split_size_or_sections, axis)


def permute(input: paddle.Tensor, axis: Sequence[int]) -> paddle.Tensor:  # noqa: A002 (MindSpore's name)
    return paddle.transpose(input, list(axis))


def cast(input: paddle.Tensor, dtype: Any) -> paddle.Tensor:  # noqa: A002
    return input.astype(to_paddle_dtype(dtype))


def arange(start: Any = 0, end: Any = None, step: Any = 1, *, dtype: Any = None) -> paddle.Tensor:
    if end is None:
        start, end = 0, start
    bounds = (start, end, step)
    if dtype is None:
        dtype = paddle.int64 if all(isinstance(b, int) for b in bounds) else paddle.float32
    return paddle.arange(start, end, step, dtype=to_paddle_dtype(dtype))


def _operand(value: Any, like: paddle.Tensor) -> paddle.Tensor:
    return value if isinstance(value, paddle.Tensor) else paddle.full([], value, dtype=like.dtype)


def where(condition: paddle.Tensor, input: Any, other: Any) -> paddle.Tensor:  # noqa: A002
    like = input if isinstance(input, paddle.Tensor) else other
    return paddle.where(condition, _operand(input, like), _operand(other, like))


def masked_fill(input_x: paddle.Tensor, mask: paddle.Tensor, value: Any) -> paddle.Tensor:
    """``input_x`` with ``value`` where ``mask`` is True (broadcast); differentiable in ``input_x``."""
    return paddle.where(mask, _operand(value, input_x).astype(input_x.dtype), input_x)


def tile(input: paddle.Tensor, dims: Sequence[int]) -> paddle.Tensor:  # noqa: A002
    dims = list(dims)
    if len(dims) > input.ndim:
        input = paddle.reshape(input, [1] * (len(dims) - input.ndim) + list(input.shape))
    elif len(dims) < input.ndim:
        dims = [1] * (input.ndim - len(dims)) + dims
    return paddle.tile(input, dims)


def broadcast_to(input: paddle.Tensor, shape: Sequence[int]) -> paddle.Tensor:  # noqa: A002
    shape = list(shape)
    offset = len(shape) - input.ndim
    shape = [input.shape[i - offset] if s == -1 else s for i, s in enumerate(shape)]
    return paddle.broadcast_to(input, shape)


def cumsum(x: paddle.Tensor, axis: int, dtype: Any = None) -> paddle.Tensor:
    if dtype is not None:
        x = x.astype(to_paddle_dtype(dtype))
    return paddle.cumsum(x, axis=axis)


def squeeze(input: paddle.Tensor, axis: Any = None) -> paddle.Tensor:  # noqa: A002
    return paddle.squeeze(input, axis=axis_list(axis))


def bmm(input_x: paddle.Tensor, mat2: paddle.Tensor) -> paddle.Tensor:
    return paddle.matmul(input_x, mat2)
