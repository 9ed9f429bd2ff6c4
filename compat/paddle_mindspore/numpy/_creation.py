"""``mindspore.numpy`` array creation: NumPy's functions with MindSpore's default dtypes (Python
ints become int32, Python floats float32; ``ones``/``zeros``/``eye``/``linspace`` default to
float32)."""

from __future__ import annotations

from typing import Any

import numpy as np
import paddle

from .._dtype import to_paddle_dtype
from .._validate import not_provided

__all__ = [
    "array",
    "asarray",
    "ones",
    "zeros",
    "full",
    "ones_like",
    "zeros_like",
    "full_like",
    "arange",
    "linspace",
    "eye",
    "identity",
    "meshgrid",
]


def _default(values: Any) -> str:
    kind = np.asarray(values).dtype.kind
    return {"b": "bool", "i": "int32", "u": "int32", "f": "float32"}.get(kind, "float32")


def _dtype(dtype: Any, fallback: str) -> Any:
    return fallback if dtype is None else to_paddle_dtype(dtype)


def array(obj: Any, dtype: Any = None, copy: bool = True, ndmin: int = 0) -> paddle.Tensor:
    if isinstance(obj, paddle.Tensor):
        out = obj.clone() if copy else obj
        out = out if dtype is None else out.astype(to_paddle_dtype(dtype))
    else:
        data = np.asarray(obj)
        out = paddle.to_tensor(data, dtype=_dtype(dtype, _default(data)))
    while out.ndim < ndmin:
        out = out.unsqueeze(0)
    return out


def asarray(a: Any, dtype: Any = None) -> paddle.Tensor:
    return array(a, dtype, copy=False)


def _shape(shape: Any) -> list[int]:
    return [shape] if isinstance(shape, int) else list(shape)


def ones(shape: Any, dtype: Any = None) -> paddle.Tensor:
    return paddle.ones(_shape(shape), dtype=_dtype(dtype, "float32"))


def zeros(shape: Any, dtype: Any = None) -> paddle.Tensor:
    return paddle.zeros(_shape(shape), dtype=_dtype(dtype, "float32"))


def full(shape: Any, fill_value: Any, dtype: Any = None) -> paddle.Tensor:
    if isinstance(fill_value, paddle.Tensor):
        return paddle.broadcast_to(fill_value, _shape(shape)).astype(_dtype(dtype, fill_value.dtype))
    return paddle.full(_shape(shape), fill_value, dtype=_dtype(dtype, _default(fill_value)))


def ones_like(a: paddle.Tensor, dtype: Any = None) -> paddle.Tensor:
    return paddle.ones_like(a, dtype=_dtype(dtype, a.dtype))


def zeros_like(a: paddle.Tensor, dtype: Any = None) -> paddle.Tensor:
    return paddle.zeros_like(a, dtype=_dtype(dtype, a.dtype))


def full_like(a: paddle.Tensor, fill_value: Any, dtype: Any = None) -> paddle.Tensor:
    return paddle.full_like(a, fill_value, dtype=_dtype(dtype, a.dtype))


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> paddle.Tensor:
    """int32 for int bounds, float32 otherwise (MindSpore's defaults)."""
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    fallback = _default([start, stop, step])
    values = np.arange(start, stop, step)
    return paddle.to_tensor(
        values.astype(fallback if dtype is None else np.float64), dtype=_dtype(dtype, fallback)
    )


def linspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: Any = None,
    axis: int = 0,
) -> Any:
    values, step = np.linspace(float(start), float(stop), num, endpoint=endpoint, retstep=True)
    out = paddle.to_tensor(values.astype(np.float32), dtype=_dtype(dtype, "float32"))
    return (out, step) if retstep else out


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> paddle.Tensor:  # noqa: N803
    return paddle.to_tensor(np.eye(N, M, k, dtype=np.float32), dtype=_dtype(dtype, "float32"))


def identity(n: int, dtype: Any = None) -> paddle.Tensor:
    return eye(n, dtype=dtype)


def meshgrid(*xi: paddle.Tensor, sparse: bool = False, indexing: str = "xy") -> list[paddle.Tensor]:
    if sparse:
        raise not_provided("mindspore.numpy.meshgrid(sparse=True)")
    grids = paddle.meshgrid(*xi)  # "ij" indexing
    if indexing == "xy" and len(xi) >= 2:
        grids = [paddle.transpose(g, [1, 0, *range(2, g.ndim)]) for g in grids]
    elif indexing != "ij":
        raise ValueError(f"For 'meshgrid', 'indexing' must be 'xy' or 'ij', but got {indexing!r}.")
    return list(grids)
