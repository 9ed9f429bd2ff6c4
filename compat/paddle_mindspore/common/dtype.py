"""``mindspore.common.dtype`` (often imported as ``mstype``)."""

import paddle

from .._c_expression.typing import BFloat, Float
from .._dtype import (
    bfloat16,
    bool_,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
)
from .._unprovided import unprovided_object
from .._validate import missing as _missing

half, single, double = float16, float32, float64  # MindSpore's aliases
uint32 = paddle.uint32
uint64 = paddle.uint64
complex64 = paddle.complex64
complex128 = paddle.complex128
# Paddle has no 16-bit unsigned dtype (its ``paddle.uint16`` is bfloat16's storage name), so
# MindSpore's ``uint16`` exists as a name only: using it raises MissingAPIError.
uint16 = unprovided_object("mindspore.common.dtype.uint16")

# MindSpore's tuple of every dtype, as far as this layer has them (Paddle's).
all_types = (bool_, int8, int16, int32, int64, uint8, uint32, uint64, float16, float32, float64, bfloat16,
             complex64, complex128)

__all__ = [
    "Float", "BFloat", "half", "single", "double", "all_types", "uint16", "uint32", "uint64", "complex64",
    "complex128", "bfloat16", "bool_", "float16", "float32", "float64", "int8", "int16", "int32", "int64",
    "uint8",
]


def __getattr__(name: str):
    raise _missing("mindspore.common.dtype", name)
