"""``mindspore.ops.functional`` (often imported as ``F``): the functional forms."""

from .._validate import missing as _missing
from ._functional import (
    dropout,
    expand_dims,
    matmul,
    mean,
    ones,
    ones_like,
    relu,
    reshape,
    softmax,
    stop_gradient,
    sum,
    transpose,
    zeros,
    zeros_like,
)

__all__ = [
    "dropout", "expand_dims", "matmul", "mean", "ones", "ones_like", "relu", "reshape", "softmax",
    "stop_gradient", "sum", "transpose", "zeros", "zeros_like",
]


def __getattr__(name: str):
    raise _missing("mindspore.ops.functional", name)
