"""``mindspore.common.initializer``."""

from .._initializer import (
    Constant,
    HeNormal,
    HeUniform,
    Initializer,
    Normal,
    One,
    TruncatedNormal,
    Uniform,
    XavierUniform,
    Zero,
    initializer,
)
from .._tensor import Tensor
from .._validate import missing as _missing

__all__ = [
    "Constant", "HeNormal", "HeUniform", "Initializer", "Normal", "One", "TruncatedNormal", "Uniform",
    "XavierUniform", "Zero", "initializer", "Tensor",
]


def __getattr__(name: str):
    raise _missing("mindspore.common.initializer", name)
