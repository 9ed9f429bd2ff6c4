"""``mindspore.common.dtype`` (often imported as ``mstype``)."""

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
from .._validate import missing as _missing

__all__ = ["bfloat16", "bool_", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8"]


def __getattr__(name: str):
    raise _missing("mindspore.common.dtype", name)
