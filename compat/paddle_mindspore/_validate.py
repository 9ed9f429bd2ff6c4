"""Argument checks that raise MindSpore 2.10's own error texts.

The texts were recorded from real MindSpore (see compat/tests/data/d_semantics_pynative.txt);
keep them byte-for-byte when editing.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

__all__ = ["check_bool", "check_bool_param", "bind", "MissingAPIError", "missing", "not_provided"]


def check_bool(value: Any) -> bool:
    """MindSpore's ``Validator.check_bool``: ``The input value must be a bool, but got int.``"""
    if not isinstance(value, bool):
        raise TypeError(f"The input value must be a bool, but got {type(value).__name__}.")
    return value


def check_bool_param(name: str, value: Any) -> bool:
    """MindSpore's keyword check: ``The parameter 'x' must be <class 'bool'>, but got <class 'str'>``."""
    if not isinstance(value, bool):
        raise TypeError(f"The parameter '{name}' must be {bool}, but got {type(value)}")
    return value


def bind(function: Callable[..., Any], args: tuple, kwargs: dict) -> inspect.BoundArguments:
    """Bind a call the way MindSpore's signature-checked APIs do.

    Raises the ``inspect`` texts MindSpore shows: ``too many positional arguments`` and
    ``got an unexpected keyword argument 'p'``.
    """
    bound = inspect.signature(function).bind(*args, **kwargs)
    bound.apply_defaults()
    return bound


class MissingAPIError(AttributeError):
    """A MindSpore API this compatibility layer does not provide (never approximated)."""


def missing(module: str, name: str) -> MissingAPIError:
    """The error for ``module.name`` not being provided."""
    return MissingAPIError(
        f"{module}.{name} is not provided by paddle_mindspore (the MindSpore "
        f"compatibility layer covers the APIs listed in compat/README.md); port this call to "
        f"Paddle directly or add it to the layer"
    )


def not_provided(what: str, hint: str = "") -> NotImplementedError:
    """The error for an option or form of a provided API that this layer does not cover."""
    suffix = f"; {hint}" if hint else ""
    return NotImplementedError(f"{what} is not provided by paddle_mindspore{suffix}")
