"""MindSpore's data methods on Paddle tensors and parameters: conversion, copies, printing, set_data.

``set_data`` keeps the parameter object (optimizers and cells holding it see the new value)
and its dtype, as MindSpore does; a new shape replaces the storage.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import paddle
from paddle.base.framework import EagerParamBase

from .._dtype import to_numpy_dtype, to_paddle_dtype
from .._initializer import initializer
from .._paddle_members import paddle_member
from .._tensor import Parameter

__all__ = ["size", "softmax", "where", "asnumpy", "copy", "set_data", "init_data", "astype", "to",
           "type_method", "tensor_str", "tensor_format", "tensor_repr", "param_repr", "dtype_name",
           "param_clone", "param_name", "set_param_name", "cache_enable", "flush_from_cache"]

_DTYPE_NAMES = {
    paddle.bool: "Bool", paddle.int8: "Int8", paddle.int16: "Int16", paddle.int32: "Int32",
    paddle.int64: "Int64", paddle.uint8: "UInt8", paddle.float16: "Float16", paddle.float32: "Float32",
    paddle.float64: "Float64", paddle.bfloat16: "BFloat16",
}


def dtype_name(dtype: Any) -> str:
    """MindSpore's name of a dtype (``Float32``)."""
    return _DTYPE_NAMES.get(dtype, str(dtype))


def to(x: paddle.Tensor, dtype: Any) -> paddle.Tensor:
    """``Tensor.to(dtype)``: ``x.astype(dtype)`` (MindSpore's takes a dtype only)."""
    return astype(x, dtype)


def type_method(x: paddle.Tensor) -> Callable[..., Any]:
    """``Tensor.type`` (a method in MindSpore): ``x.type()`` is the dtype's name
    (``'Float32'``); ``x.type(dtype)`` is ``x.astype(dtype)``."""

    def type(dtype: Any = None) -> Any:  # noqa: A001  (MindSpore's name)
        if dtype is None:
            return dtype_name(x.dtype)
        return astype(x, dtype)

    return type


def size(x: paddle.Tensor) -> int:
    """The number of elements, a Python int."""
    return int(np.prod(paddle_member(paddle.Tensor, "shape").__get__(x), dtype=np.int64))


def setitem(x: paddle.Tensor, key: Any, value: Any) -> None:
    """``x[key] = value``; on a parameter (a leaf that requires grad) it writes the data, as
    MindSpore does (``param.data[i] = v`` in weight initialisation), which Paddle refuses while
    recording gradients."""
    setter = paddle_member(paddle.Tensor, "__setitem__")
    if x.is_leaf and not x.stop_gradient:
        with paddle.no_grad():
            return setter(x, key, value)
    return setter(x, key, value)


def data(x: paddle.Tensor) -> paddle.Tensor:
    """``Tensor.data``: the tensor itself. ``Parameter.data``: a Tensor, not a Parameter, on the
    parameter's memory (MindSpore 2.10, recorded: writing into it writes the parameter;
    ``load_param_into_net`` refuses it). BatchNorm's moving statistics count as Parameters."""
    if isinstance(x, EagerParamBase) or getattr(x, "_ms_parameter", False):
        return x.detach()
    return x


def softmax(x: paddle.Tensor, axis: int = -1, **kwargs: Any) -> paddle.Tensor:
    """``softmax(axis=-1)`` (also ``dim=``)."""
    return paddle.nn.functional.softmax(x, axis=kwargs.pop("dim", axis))


def where(x: paddle.Tensor, condition: paddle.Tensor, y: Any) -> paddle.Tensor:
    """``x.where(condition, y)``: ``x`` where ``condition`` holds, else ``y``."""
    y = y if isinstance(y, paddle.Tensor) else paddle.full([], y, dtype=x.dtype)
    return paddle.where(condition, x, y)


def asnumpy(x: paddle.Tensor) -> np.ndarray:
    """The tensor's value as a numpy array."""
    return x.numpy()


def copy(x: paddle.Tensor) -> paddle.Tensor:
    """A copy with its own storage (differentiable, as MindSpore's)."""
    return paddle.assign(x)


def astype(x: paddle.Tensor, dtype: Any, copy: bool = True) -> paddle.Tensor:
    return paddle_member(paddle.Tensor, "astype")(x, to_paddle_dtype(dtype))


def _value(data: Any, like: paddle.Tensor) -> paddle.Tensor:
    if isinstance(data, paddle.Tensor):
        return data.detach().astype(like.dtype)
    return paddle.to_tensor(np.asarray(data, dtype=to_numpy_dtype(like.dtype)))


def set_data(x: paddle.Tensor, data: Any, slice_shape: bool = False) -> paddle.Tensor:
    """``Parameter.set_data(data)``: replace the value in place (dtype kept); returns ``x``."""
    value = _value(data, x)
    with paddle.no_grad():
        if list(value.shape) == list(x.shape):
            paddle.assign(value, output=x)
        else:
            value._share_underline_tensor_to(x)  # a new shape: x takes value's storage
    return x


def init_data(x: paddle.Tensor, layout: Any = None, set_sliced: bool = False) -> paddle.Tensor:
    """Values are created at construction here, so there is nothing to initialise: returns ``x``."""
    return x


def tensor_str(x: paddle.Tensor) -> str:
    """``print(tensor)``: the numpy array's text, as MindSpore prints."""
    return str(x.numpy())


def tensor_format(x: paddle.Tensor, spec: str) -> str:
    """``f"{x}"`` is ``str(x)``; a format spec formats a one-element tensor's value (MindSpore
    rejects any spec; Paddle's formatting of scalars is kept as a superset)."""
    if not spec:
        return tensor_str(x)
    return paddle_member(paddle.Tensor, "__format__")(x, spec)


def _values_text(array: np.ndarray) -> str:
    if array.ndim == 0:
        value = array.item()
        return f"{value:g}" if isinstance(value, float) else str(value)
    formatter = {"float_kind": lambda v: f"{v: .8e}"} if array.dtype.kind == "f" else None
    return np.array2string(array, separator=", ", formatter=formatter, threshold=1000)


def tensor_repr(x: paddle.Tensor) -> str:
    """``Tensor(shape=[2, 3], dtype=Float32, value=...)`` in MindSpore's layout."""
    array = x.numpy()
    gap = "\n" if array.ndim > 1 else " "
    return f"Tensor(shape={list(array.shape)}, dtype={dtype_name(x.dtype)}, value={gap}{_values_text(array)})"


def flush_from_cache(x: paddle.Tensor) -> None:
    """``Tensor.flush_from_cache()``: MindSpore writes a host-cached tensor back to the host; no
    tensor is cached here (``Parameter.cache_enable`` is always False), so, as MindSpore does
    for an uncached tensor, there is nothing to write."""
    return None


def cache_enable(p: paddle.Tensor) -> bool:
    """``Parameter.cache_enable``: MindSpore's host-cached embedding tables (parameter-server
    training) are never set up here, so always False."""
    return False


def param_name(p: paddle.Tensor) -> str:
    """MindSpore's parameter name: given at creation, set by the cells that own it."""
    name = getattr(p, "_ms_name", None)
    return name if name is not None else paddle_member(type(p), "name").__get__(p)


def set_param_name(p: paddle.Tensor, name: str) -> None:
    if not isinstance(name, str):
        raise TypeError(f"The type of the Parameter's name should be 'str', but got {type(name).__name__}.")
    p._ms_name = name


def param_repr(p: paddle.Tensor) -> str:
    return (f"Parameter (name={param_name(p)}, shape={tuple(p.shape)}, dtype={dtype_name(p.dtype)}, "
            f"requires_grad={not p.stop_gradient})")


def param_clone(p: paddle.Tensor, init: Any = "same") -> paddle.Tensor:
    """``Parameter.clone(init='same')``: a new parameter (same name and ``requires_grad``)."""
    if init == "same":
        value = p.detach().clone()
    else:
        value = initializer(init, list(p.shape), p.dtype)
    return Parameter(value, name=param_name(p), requires_grad=not p.stop_gradient)
