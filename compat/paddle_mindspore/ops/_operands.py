"""Operand helpers shared by the primitive and functional ops."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import paddle

__all__ = ["tensor_operands", "int_tuple", "axis_list", "unary", "reduction"]


def tensor_operands(op: str, x: Any, y: Any) -> tuple[paddle.Tensor, paddle.Tensor]:
    """Both operands as tensors; a Python number takes the other operand's dtype (float32 for
    a float with an integer or bool tensor)."""
    x_is, y_is = isinstance(x, paddle.Tensor), isinstance(y, paddle.Tensor)
    if not (x_is or y_is):
        raise TypeError(f"For '{op}', at least one of the inputs must be a Tensor, "
                        f"but got {type(x).__name__} and {type(y).__name__}.")
    # an integer or bool tensor with a Python float computes in float32, as in MindSpore
    # (``Less()(int32_tensor, 0.5)`` compares with 0.5, not with 0)
    if not x_is and isinstance(x, float) and not y.is_floating_point():
        y = y.astype("float32")
    if not y_is and isinstance(y, float) and not x.is_floating_point():
        x = x.astype("float32")
    if not x_is:
        x = paddle.full([], x, dtype=y.dtype)
    if not y_is:
        y = paddle.full([], y, dtype=x.dtype)
    return x, y


def int_tuple(op: str, name: str, value: Any, size: int) -> tuple[int, ...]:
    """An int or a sequence of ``size`` ints (or of 4 ints for NCHW strides) as a tuple."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,) * size
    if isinstance(value, Sequence) and all(isinstance(v, int) for v in value):
        if len(value) == size:
            return tuple(value)
        if len(value) == 4 and size == 2:  # MindSpore also accepts (1, 1, h, w)
            return tuple(value[2:])
    raise ValueError(f"For '{op}', '{name}' must be an int or a tuple of {size} ints, but got {value!r}.")


def axis_list(axis: Any) -> list[int] | None:
    """MindSpore reduction axes (``()`` means all) as Paddle's ``axis`` argument."""
    if axis is None or axis == ():
        return None
    if isinstance(axis, int):
        return [axis]
    return list(axis)


def _named(name: str, op: Callable, signature: inspect.Signature, doc: str) -> Callable:
    op.__name__ = op.__qualname__ = name
    op.__signature__ = signature  # keyword calls and errors name MindSpore's argument
    op.__doc__ = doc
    return op


def unary(name: str, fn: Callable[[paddle.Tensor], paddle.Tensor], arg: str = "input") -> Callable:
    """``ops.<name>(<arg>)``: Paddle's elementwise ``fn``, with MindSpore's argument name."""
    def op(*args: Any, **kwargs: Any) -> paddle.Tensor:
        if len(args) == 1 and not kwargs:  # the usual call, without binding
            return fn(args[0])
        return fn(*signature.bind(*args, **kwargs).args)

    signature = inspect.Signature([inspect.Parameter(arg, inspect.Parameter.POSITIONAL_OR_KEYWORD)])
    return _named(name, op, signature, f"``ops.{name}({arg})``: elementwise, as Paddle's ``{fn.__name__}``.")


def reduction(name: str, fn: Callable[..., paddle.Tensor]) -> Callable:
    """``ops.<name>(input, axis=None, keepdims=False)``: Paddle's ``fn`` over MindSpore's axes."""
    def op(*args: Any, **kwargs: Any) -> paddle.Tensor:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        x, axis, keepdims = bound.args
        return fn(x, axis=axis_list(axis), keepdim=keepdims)

    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    signature = inspect.Signature([inspect.Parameter("input", kind),
                                   inspect.Parameter("axis", kind, default=None),
                                   inspect.Parameter("keepdims", kind, default=False)])
    return _named(name, op, signature, f"``ops.{name}(input, axis=None, keepdims=False)``: Paddle's "
                                       f"``{fn.__name__}`` over ``axis`` (all when None or ``()``).")
