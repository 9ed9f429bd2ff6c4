"""MindSpore's reduction Tensor methods on Paddle tensors (see NOTE [ Caller-scoped Tensor semantics ]).

MindSpore 2.10 overloads these (recorded in compat/tests/data/g_cases_reference.json):

- ``mean``/``sum``: ``(axis=None, keep_dims|keepdims=False)`` and ``(dim=None, keepdim=False,
  *, dtype)``; a bool second positional argument is ``keepdim``, a dtype is ``dtype``.
- ``max``/``min``: no argument or keyword ``axis`` gives a tensor (``keepdims``, ``initial``,
  ``return_indices``; over all elements ``keepdims`` is ignored); a positional ``dim`` gives
  ``(values, indices)`` (``keepdim``).
- ``std``/``var``: ``(axis=None, ddof=0, keepdims=False)``: the *biased* estimate by default
  (Paddle's default is unbiased).
"""

from __future__ import annotations

from typing import Any

import paddle

from .._dtype import to_paddle_dtype
from .._validate import not_provided

__all__ = ["mean", "sum", "max", "min", "std", "var"]


def _axes(axis: Any) -> list[int] | None:
    if axis is None or axis == ():
        return None
    if isinstance(axis, int):
        return [axis]
    return [int(a) for a in axis]


def _keep(kwargs: dict, default: bool = False) -> bool:
    keys = [k for k in ("keep_dims", "keepdims", "keepdim") if k in kwargs]
    if len(keys) > 1:
        raise TypeError(f"got both '{keys[0]}' and '{keys[1]}'")
    return bool(kwargs.pop(keys[0])) if keys else default


def _axis(args: tuple, kwargs: dict) -> Any:
    for key in ("axis", "dim"):
        if key in kwargs:
            return kwargs.pop(key)
    return args[0] if args else None


def _no_more(api: str, args: tuple, kwargs: dict) -> None:
    if kwargs:
        raise TypeError(f"Tensor.{api}() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if args:
        raise TypeError(f"Tensor.{api}() got too many positional arguments")


def _reduce(api: str, function: Any, x: paddle.Tensor, args: tuple, kwargs: dict) -> paddle.Tensor:
    axis = _axis(args[:1], kwargs)
    rest = list(args[1:])
    keep = _keep(kwargs)
    dtype = kwargs.pop("dtype", None)
    if rest and isinstance(rest[0], bool):
        keep = rest.pop(0)
    elif rest:
        dtype = rest.pop(0)
        if rest:
            keep = bool(rest.pop(0))
    if kwargs.pop("initial", None) is not None:
        raise not_provided(f"Tensor.{api}(initial=...)")
    _no_more(api, tuple(rest), kwargs)
    if dtype is not None:
        x = x.astype(to_paddle_dtype(dtype))
    return function(x, axis=_axes(axis), keepdim=keep)


def mean(x: paddle.Tensor, *args: Any, **kwargs: Any) -> paddle.Tensor:
    return _reduce("mean", paddle.mean, x, args, kwargs)


def sum(x: paddle.Tensor, *args: Any, **kwargs: Any) -> paddle.Tensor:  # noqa: A001 (MindSpore's name)
    return _reduce("sum", paddle.sum, x, args, kwargs)


def _extreme(api: str, values_fn: Any, index_fn: Any, x: paddle.Tensor, args: tuple,
             kwargs: dict) -> Any:
    if args:  # max(dim, keepdim=False): (values, indices)
        dim, rest = args[0], list(args[1:])
        keep = rest.pop(0) if rest else _keep(kwargs)
        _no_more(api, tuple(rest), kwargs)
        return values_fn(x, axis=dim, keepdim=keep), index_fn(x, axis=dim, keepdim=keep)
    axis = _axis((), kwargs)
    keep = _keep(kwargs)
    indices = kwargs.pop("return_indices", False)
    if kwargs.pop("initial", None) is not None or kwargs.pop("where", None) is not None:
        raise not_provided(f"Tensor.{api}(initial=..., where=...)")
    _no_more(api, (), kwargs)
    if indices:
        if not isinstance(axis, int):
            raise ValueError(f"For 'Tensor.{api}', 'axis' must be an int when 'return_indices' is True.")
        return values_fn(x, axis=axis, keepdim=keep), index_fn(x, axis=axis, keepdim=keep)
    if axis is None:  # MindSpore 2.10 ignores keepdims over all elements (recorded)
        return values_fn(x)
    return values_fn(x, axis=_axes(axis), keepdim=keep)


def max(x: paddle.Tensor, *args: Any, **kwargs: Any) -> Any:  # noqa: A001
    return _extreme("max", paddle.max, paddle.argmax, x, args, kwargs)


def min(x: paddle.Tensor, *args: Any, **kwargs: Any) -> Any:  # noqa: A001
    return _extreme("min", paddle.min, paddle.argmin, x, args, kwargs)


def var(x: paddle.Tensor, axis: Any = None, ddof: int = 0, keepdims: bool = False) -> paddle.Tensor:
    """``var(axis=None, ddof=0, keepdims=False)``: ``sum((x - mean)**2) / (n - ddof)``."""
    if isinstance(ddof, bool) or not isinstance(ddof, int):
        raise TypeError(f"For 'Tensor.var', 'ddof' must be an int, but got {type(ddof).__name__}.")
    return paddle.var(x, axis=_axes(axis), keepdim=keepdims, correction=ddof)


def std(x: paddle.Tensor, axis: Any = None, ddof: int = 0, keepdims: bool = False) -> paddle.Tensor:
    """``std(axis=None, ddof=0, keepdims=False)``: the square root of :func:`var`."""
    return paddle.sqrt(var(x, axis, ddof, keepdims))
