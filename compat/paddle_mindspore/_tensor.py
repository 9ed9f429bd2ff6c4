"""``Tensor``, ``Parameter`` and ``ParameterTuple``: factories producing Paddle objects.

``mindspore.Tensor(...)`` returns a ``paddle.Tensor`` and ``mindspore.Parameter(...)`` a Paddle
parameter, so everything downstream is plain Paddle; ``isinstance(x, Tensor)`` and
``isinstance(p, Parameter)`` still work through the metaclass.

Dtype rules follow MindSpore: Python ``float`` (and lists of them) become float32, ``int``
int64, ``bool`` bool; numpy arrays keep their dtype unless ``dtype`` is given.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import paddle
from paddle.base.framework import EagerParamBase

from . import _grad_hooks as hooks
from ._dtype import to_numpy_dtype, to_paddle_dtype
from ._initializer import initializer
from ._validate import not_provided

__all__ = ["Tensor", "Parameter", "ParameterTuple", "to_tensor", "parameter_like"]


class _TensorMeta(type):
    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, paddle.Tensor)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, paddle.Tensor)


class Tensor(metaclass=_TensorMeta):
    """``mindspore.Tensor(input_data=None, dtype=None, shape=None, init=None)``: a ``paddle.Tensor``."""

    def __new__(cls, input_data: Any = None, dtype: Any = None, shape: Any = None, init: Any = None,
                const_arg: bool = False, device: Any = None) -> paddle.Tensor:
        if device is not None:
            raise not_provided("mindspore.Tensor(device=...)")
        if init is not None:
            if shape is None:
                raise ValueError("For 'Tensor', 'shape' must be given together with 'init'.")
            return initializer(init, shape, dtype if dtype is not None else paddle.float32)
        if input_data is None:
            raise ValueError("For 'Tensor', 'input_data' must be given (or 'init' and 'shape').")
        return to_tensor(input_data, dtype)

    @staticmethod
    def remove_hook(handle_id: int) -> None:
        """``Tensor.remove_hook(handle_id)``: take out the gradient hook with that handle id."""
        return hooks.remove_hook(handle_id)


def to_tensor(data: Any, dtype: Any = None) -> paddle.Tensor:
    """A new Paddle tensor with MindSpore's dtype inference (no gradient)."""
    if isinstance(data, paddle.Tensor):
        out = data.detach().clone()
        return out if dtype is None else out.astype(to_paddle_dtype(dtype))
    array = np.asarray(data)
    if dtype is not None and to_paddle_dtype(dtype) == paddle.bfloat16:
        # numpy has no bfloat16: round from float32 in Paddle (to nearest even, as MindSpore does)
        return paddle.to_tensor(array.astype(np.float32)).astype(paddle.bfloat16)
    if dtype is not None:
        array = array.astype(to_numpy_dtype(dtype))
    elif not isinstance(data, np.ndarray | np.generic):
        array = array.astype(_python_dtype(array))
    return paddle.to_tensor(array)


def _python_dtype(array: np.ndarray) -> Any:
    kind = array.dtype.kind
    if kind == "f":
        return np.float32
    if kind in "iu":
        return np.int64
    return array.dtype


class _ParameterMeta(type):
    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, EagerParamBase)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, EagerParamBase)


class Parameter(metaclass=_ParameterMeta):
    """``mindspore.Parameter(default_input, name=None, requires_grad=True, ...)``; a Paddle parameter.

    ``requires_grad=False`` maps to ``stop_gradient=True``. Parallel options are accepted
    only at their defaults (single device). ``param.name`` read from MindSpore code is
    MindSpore's name: the given one (``'Parameter'`` if none), replaced by the attribute path
    once a Cell holds it (``fc.weight``, ``blocks.0.ln1.gamma``); Paddle code reads Paddle's.
    """

    def __new__(cls, default_input: Any, name: str | None = None, requires_grad: bool = True,
                layerwise_parallel: bool = False, parallel_optimizer: bool = True) -> EagerParamBase:
        if layerwise_parallel:
            raise not_provided("mindspore.Parameter(layerwise_parallel=True)")
        value = _initial_value(default_input)
        kwargs = {"name": name} if name else {}
        param = EagerParamBase.from_tensor(value, **kwargs)
        param.stop_gradient = not requires_grad
        param._ms_name = name or "Parameter"  # MindSpore's name (see nn.Cell: cells rename it)
        return param


def _initial_value(default_input: Any) -> paddle.Tensor:
    if isinstance(default_input, paddle.Tensor):
        return default_input.detach().clone()  # MindSpore: a Parameter holds its own copy
    if isinstance(default_input, int | float | bool | np.ndarray | np.generic | list | tuple):
        return to_tensor(default_input)
    raise TypeError(
        f"For 'Parameter', 'default_input' must be a Tensor, numpy array, list or number, "
        f"but got {type(default_input).__name__}"
    )


def parameter_like(x: Any) -> bool:
    """A parameter, or a running statistic that MindSpore keeps as a non-trainable Parameter
    (BatchNorm's moving statistics: buffers here, which ``Cell.get_parameters()`` yields)."""
    return isinstance(x, EagerParamBase) or getattr(x, "_ms_parameter", False)


class ParameterTuple(tuple):
    """``mindspore.ParameterTuple``: a tuple of parameters (a Cell's persistable buffers count)."""

    def __new__(cls, iterable: Any = ()) -> ParameterTuple:
        items = tuple(iterable)
        bad = [type(p).__name__ for p in items if not parameter_like(p)]
        if bad:
            raise TypeError(f"ParameterTuple input should be Parameter, but got {bad[0]}")
        return super().__new__(cls, items)

    def clone(self, prefix: str, init: Any = "same") -> ParameterTuple:
        """New Parameters named ``<prefix>.<name>``, holding copies (``init='same'``) or ``init``
        (an initializer name such as ``'zeros'``, a number or a Tensor) in each one's shape and
        dtype; buffers give non-trainable ones."""
        clones = []
        for x in self:
            same = isinstance(init, str) and init == "same"
            value = x.detach().clone() if same else initializer(init, x.shape, x.dtype).astype(x.dtype)
            name = getattr(x, "_ms_name", None) or x.name  # MindSpore's name, once a cell owns it
            clone = Parameter(value, name=f"{prefix}.{name}",
                              requires_grad=isinstance(x, EagerParamBase) and not x.stop_gradient)
            clones.append(clone)
        return ParameterTuple(clones)
