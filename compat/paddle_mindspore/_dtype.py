"""MindSpore dtype names mapped to Paddle dtypes (``mindspore.float32`` is ``paddle.float32``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import paddle

__all__ = [
    "bool_", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64",
    "bfloat16", "to_paddle_dtype", "to_numpy_dtype",
]

bool_ = paddle.bool
int8 = paddle.int8
int16 = paddle.int16
int32 = paddle.int32
int64 = paddle.int64
uint8 = paddle.uint8
float16 = paddle.float16
float32 = paddle.float32
float64 = paddle.float64
bfloat16 = paddle.bfloat16

_NUMPY = {
    paddle.bool: np.bool_, paddle.int8: np.int8, paddle.int16: np.int16, paddle.int32: np.int32,
    paddle.int64: np.int64, paddle.uint8: np.uint8, paddle.float16: np.float16,
    paddle.float32: np.float32, paddle.float64: np.float64,
}


def to_paddle_dtype(dtype: Any) -> Any:
    """Accept a MindSpore/Paddle dtype, a numpy dtype or a dtype name."""
    if dtype is None:
        return None
    if isinstance(dtype, paddle.dtype):
        return dtype
    if isinstance(dtype, str):
        dtype = "bool" if dtype in ("bool_", "bool") else dtype
        return getattr(paddle, dtype)
    return getattr(paddle, paddle.base.data_feeder.convert_dtype(dtype))


def to_numpy_dtype(dtype: Any) -> Any:
    """The numpy dtype with the same layout as a MindSpore/Paddle dtype."""
    pd = to_paddle_dtype(dtype)
    if pd not in _NUMPY:
        raise TypeError(f"no numpy equivalent for dtype {dtype!r}")
    return _NUMPY[pd]
