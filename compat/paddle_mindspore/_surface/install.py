"""Install MindSpore's Tensor and Parameter members on Paddle's classes, and remove them again.

See NOTE [ Caller-scoped Tensor semantics ] in ``scope.py``. Four kinds of member:

- ``ADDED``: names Paddle's Tensor lacks (``asnumpy``, ``expand_dims``, ``copy``, ...): present
  for MindSpore code only; for any other caller the attribute does not exist (``hasattr`` is
  False, as before), so duck-typing checks in other libraries are not misled.
- ``DISPATCHED``: names both define with different meanings (``shape``, ``reshape``, ``std``,
  ``max``, printing, ``Parameter.name``, ...): MindSpore code gets MindSpore's meaning, any
  other caller Paddle's member, called unchanged.
- ``SAME`` (``names.py``): names both define with the same meaning for the calls
  MindSpore accepts: left as Paddle defines them.
- ``GUARDED`` (``names.py``): every other name both define. MindSpore code calling it
  gets ``MissingAPIError`` naming ``mindspore.Tensor.<name>`` instead of Paddle's possibly
  different meaning; other callers get Paddle's member unchanged.
- ``MINDSPORE_ONLY`` (``names.py``): MindSpore members Paddle lacks and the layer does
  not provide: MindSpore code gets ``MissingAPIError`` naming them (``__getattr__``).
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from sys import _getframe
from typing import Any

import paddle
from paddle.base.framework import EagerParamBase

from .._grad_hooks import hooks, register_hook, remove_hook
from .._paddle_members import ABSENT, own_member
from .._validate import missing
from . import data, reduce
from . import shape as layout
from .names import GUARDED, MINDSPORE_ONLY
from .promote import OPERATORS, promoting
from .scope import MACHINERY_CODES, VERDICTS, classify, mindspore_assigner, mindspore_caller, operator_caller

__all__ = ["install_tensor_methods", "uninstall_tensor_methods", "tensor_methods_installed"]


def _remove_hook(self: Any, handle_id: int) -> None:
    """``tensor.remove_hook(handle_id)``: MindSpore's is static, so ``self`` plays no part."""
    return remove_hook(handle_id)


ADDED: dict[str, Callable] = {
    "asnumpy": data.asnumpy, "copy": data.copy, "init_data": data.init_data, "set_data": data.set_data,
    "expand_dims": layout.expand_dims, "reshape_as": layout.reshape_as,
    "flush_from_cache": data.flush_from_cache, "hooks": hooks, "remove_hook": _remove_hook,
}
DISPATCHED: dict[str, Callable] = {
    "reshape": layout.reshape, "view": layout.view, "transpose": layout.transpose, "permute": layout.permute,
    "swapaxes": layout.swapaxes, "squeeze": layout.squeeze, "flatten": layout.flatten, "astype": data.astype,
    "mean": reduce.mean, "sum": reduce.sum, "max": reduce.max, "min": reduce.min, "std": reduce.std,
    "var": reduce.var, "__str__": data.tensor_str, "__repr__": data.tensor_repr,
    "__format__": data.tensor_format, "split": layout.split, "chunk": layout.chunk, "softmax": data.softmax,
    "where": data.where, "unbind": layout.unbind, "__setitem__": data.setitem,
    "repeat_interleave": layout.repeat_interleave, "register_hook": register_hook,
    "repeat": layout.repeat, "to": data.to,
}
DISPATCHED_PROPERTIES: dict[str, Callable] = {
    "shape": layout.shape, "size": data.size, "data": data.data, "type": data.type_method,
}
PARAMETER_DISPATCHED: dict[str, Callable] = {
    "__str__": data.param_repr, "__repr__": data.param_repr, "clone": data.param_clone,
}
PARAMETER_ADDED_PROPERTIES: dict[str, Callable] = {"cache_enable": data.cache_enable}

_INSTALLED: list[tuple[type, str]] = []


def _dispatch(name: str, original: Any, ours: Callable) -> Callable:
    @functools.wraps(ours)
    def member(self: Any, *args: Any, **kwargs: Any) -> Any:
        frame = _getframe(1)  # inline mindspore_caller(): these members are on Paddle's hot path
        verdict = VERDICTS.get(frame.f_code)
        if classify(frame) if verdict is None else verdict:
            return ours(self, *args, **kwargs)
        return original(self, *args, **kwargs)

    return member


def _dispatch_operator(name: str, original: Any, ours: Callable) -> Callable:
    """``_dispatch`` for the promoting operators, which also sees MindSpore code past the
    observation frames of a policy region (NOTE [ Operators in observed regions ])."""

    @functools.wraps(ours)
    def member(self: Any, *args: Any, **kwargs: Any) -> Any:
        frame = _getframe(1)
        code = frame.f_code
        verdict = VERDICTS.get(code)
        if verdict is None:
            verdict = classify(frame)
        # past the verdict, one dict read for code known not to be the observation machinery
        if verdict or (MACHINERY_CODES.get(code, True) and operator_caller(frame)):
            return ours(self, *args, **kwargs)
        return original(self, *args, **kwargs)

    return member


def _added(name: str, ours: Callable) -> property:
    def get(self: Any) -> Any:
        if mindspore_caller():
            return types.MethodType(ours, self)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    return property(get, doc=ours.__doc__)


def _guard(cls_name: str, name: str, original: Any) -> Any:
    if isinstance(original, property) or hasattr(original, "__set__"):
        def getter(self: Any) -> Any:
            if mindspore_caller():
                raise missing(f"mindspore.{cls_name}", name)
            return original.__get__(self)

        setter = (lambda self, value: original.__set__(self, value)) if hasattr(original, "__set__") else None
        return property(getter, setter, doc=getattr(original, "__doc__", None))

    @functools.wraps(original)
    def member(self: Any, *args: Any, **kwargs: Any) -> Any:
        if mindspore_caller():
            raise missing(f"mindspore.{cls_name}", name)
        return original(self, *args, **kwargs)

    return member


def _added_property(name: str, ours: Callable) -> property:
    def get(self: Any) -> Any:
        if mindspore_caller():
            return ours(self)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    return property(get, doc=ours.__doc__)


def _missing_attribute(self: Any, name: str) -> Any:
    """``__getattr__``: a MindSpore member the layer lacks is named as such in MindSpore code.

    A running statistic that MindSpore keeps as a Parameter (BatchNorm's moving statistics,
    buffers marked ``_ms_parameter`` here) answers the Parameter-only properties too (mindcv's
    ``StateMonitor`` reads ``cache_enable`` of every ``get_parameters()`` entry)."""
    if name in PARAMETER_ADDED_PROPERTIES and getattr(self, "_ms_parameter", False) and mindspore_caller():
        return PARAMETER_ADDED_PROPERTIES[name](self)
    if name in MINDSPORE_ONLY and mindspore_caller():
        raise missing("mindspore.Tensor", name)
    raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


def _property(original: Any, ours: Callable, setter: Callable | None = None) -> property:
    def get(self: Any) -> Any:
        frame = _getframe(1)  # inline mindspore_caller(), as in _dispatch
        verdict = VERDICTS.get(frame.f_code)
        if classify(frame) if verdict is None else verdict:
            return ours(self)
        return original.__get__(self)

    def put(self: Any, value: Any) -> None:
        if setter is not None and mindspore_assigner():
            setter(self, value)
        else:
            original.__set__(self, value)

    return property(get, put, doc=getattr(original, "__doc__", None))


def _set(cls: type, name: str, member: Any) -> None:
    own_member(cls, name)  # capture Paddle's before replacing it
    setattr(cls, name, member)
    _INSTALLED.append((cls, name))


def install_tensor_methods() -> None:
    """Give ``paddle.Tensor`` and Paddle parameters MindSpore's members (idempotent).

    Called when the layer is imported. Paddle code and plain Paddle modules keep Paddle's
    members: only MindSpore code (NOTE [ Caller-scoped Tensor semantics ]) sees the change.
    """
    if _INSTALLED:
        return
    tensor = paddle.Tensor
    for name, ours in ADDED.items():
        _set(tensor, name, _added(name, ours))
    for name, ours in DISPATCHED.items():
        _set(tensor, name, _dispatch(name, own_member(tensor, name), ours))
    for name, ours in DISPATCHED_PROPERTIES.items():
        _set(tensor, name, _property(own_member(tensor, name), ours))
    for name in OPERATORS:  # MindSpore's type promotion between tensors (promote.py)
        original = own_member(tensor, name)
        _set(tensor, name, _dispatch_operator(name, original, promoting(original)))
    _set(tensor, "__getattr__", _missing_attribute)
    for name in sorted(GUARDED):
        original = own_member(tensor, name)
        if original is not ABSENT:
            _set(tensor, name, _guard("Tensor", name, original))
    for name, ours in PARAMETER_DISPATCHED.items():
        original = own_member(EagerParamBase, name)
        original = tensor.__dict__[name] if original is ABSENT else original
        _set(EagerParamBase, name, _dispatch(name, original, ours))
    for name, ours in PARAMETER_ADDED_PROPERTIES.items():
        _set(EagerParamBase, name, _added_property(name, ours))
    _set(tensor, "name", _property(own_member(tensor, "name"), data.param_name, data.set_param_name))


def uninstall_tensor_methods() -> None:
    """Put Paddle's own members back exactly (the installed ones are removed)."""
    while _INSTALLED:
        cls, name = _INSTALLED.pop()
        original = own_member(cls, name)
        if original is ABSENT:
            delattr(cls, name)
        else:
            setattr(cls, name, original)


def tensor_methods_installed() -> bool:
    return bool(_INSTALLED)
