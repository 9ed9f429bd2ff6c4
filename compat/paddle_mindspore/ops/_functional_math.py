"""Functional math and activation operators of ``mindspore.ops`` (MindSpore 2.10 semantics).

``max``/``min`` return ``(values, indices)`` as MindSpore's do, even over all elements (where
MindSpore's index is always 0);
``std``/``var`` use ``ddof=0`` by default; ``prod`` and ``mean`` spell ``keep_dims``, ``amax``
and ``max`` ``keepdims``, ``argmax`` ``keepdim``, as MindSpore does.
"""

from __future__ import annotations

from typing import Any

import paddle
import paddle.nn.functional as F

from .._surface.reduce import var as _var
from ._operands import axis_list, reduction, unary

__all__ = ["max", "min", "amax", "amin", "prod", "std", "var", "argmax", "gelu", "silu", "sigmoid",
           "tanh", "sqrt", "exp", "log", "pow"]


def _extreme(values_fn: Any, index_fn: Any, input: paddle.Tensor, axis: Any,  # noqa: A002
             keepdims: bool) -> tuple:
    if axis is None:  # MindSpore 2.10 returns index 0 over all elements (keepdims ignored), recorded
        return values_fn(input), paddle.zeros([], dtype=paddle.int64)
    return values_fn(input, axis=axis, keepdim=keepdims), index_fn(input, axis=axis, keepdim=keepdims)


def max(input: paddle.Tensor, axis: Any = None, keepdims: bool = False) -> tuple:  # noqa: A001,A002
    """``(values, indices)`` of the maximum over ``axis`` (over all elements when None)."""
    return _extreme(paddle.max, paddle.argmax, input, axis, keepdims)


def min(input: paddle.Tensor, axis: Any = None, keepdims: bool = False) -> tuple:  # noqa: A001,A002
    return _extreme(paddle.min, paddle.argmin, input, axis, keepdims)


amax = reduction("amax", paddle.amax)
amin = reduction("amin", paddle.amin)


def prod(input: paddle.Tensor, axis: Any = None, keep_dims: bool = False,  # noqa: A002
         dtype: Any = None) -> paddle.Tensor:
    return paddle.prod(input, axis=axis_list(axis), keepdim=keep_dims, dtype=dtype)


def var(input: paddle.Tensor, axis: Any = None, ddof: int = 0,  # noqa: A002
        keepdims: bool = False) -> paddle.Tensor:
    return _var(input, axis, ddof, keepdims)


def std(input: paddle.Tensor, axis: Any = None, ddof: int = 0,  # noqa: A002
        keepdims: bool = False) -> paddle.Tensor:
    return paddle.sqrt(_var(input, axis, ddof, keepdims))


def argmax(input: paddle.Tensor, dim: int | None = None, keepdim: bool = False) -> paddle.Tensor:  # noqa: A002
    return paddle.argmax(input, axis=dim, keepdim=keepdim if dim is not None else False)


def gelu(input: paddle.Tensor, approximate: str = "none") -> paddle.Tensor:  # noqa: A002
    """``approximate='none'`` (erf) or ``'tanh'``."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"For 'gelu', 'approximate' must be 'none' or 'tanh', but got {approximate!r}.")
    return F.gelu(input, approximate=approximate == "tanh")


silu = unary("silu", F.silu)
sigmoid = unary("sigmoid", F.sigmoid)
tanh = unary("tanh", paddle.tanh)
sqrt = unary("sqrt", paddle.sqrt, "x")
exp = unary("exp", paddle.exp)
log = unary("log", paddle.log)


def pow(input: Any, exponent: Any) -> paddle.Tensor:  # noqa: A001,A002
    return paddle.pow(input, exponent)
