"""``mindspore._checkparam``: MindSpore's argument checks, with its error texts.

mindformers validates its configurations with these (``check_positive_int``,
``check_value_type``, ``args_type_check``...). The relations and messages follow MindSpore
2.10's module of the same name; MindSpore 2.x has no ``Validator`` / ``Rel`` classes (the
functions and constants sit at module level), and neither does this module.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterable
from functools import wraps
from typing import Any

import numpy as np

EQ, NE, LT, LE, GT, GE = 1, 2, 3, 4, 5, 6
INC_NEITHER, INC_LEFT, INC_RIGHT, INC_BOTH = 7, 8, 9, 10
IN, NOT_IN = 11, 12

_BINARY = {
    EQ: ("=", lambda a, b: a == b),
    NE: ("!=", lambda a, b: a != b),
    LT: ("<", lambda a, b: a < b),
    LE: ("<=", lambda a, b: a <= b),
    GT: (">", lambda a, b: a > b),
    GE: (">=", lambda a, b: a >= b),
    IN: ("in", lambda a, b: a in b),
    NOT_IN: ("not in", lambda a, b: a not in b),
}
_RANGE = {
    INC_NEITHER: ("({}, {})", lambda v, lo, hi: lo < v < hi),
    INC_LEFT: ("[{}, {})", lambda v, lo, hi: lo <= v < hi),
    INC_RIGHT: ("({}, {}]", lambda v, lo, hi: lo < v <= hi),
    INC_BOTH: ("[{}, {}]", lambda v, lo, hi: lo <= v <= hi),
}

__all__ = [
    "EQ",
    "NE",
    "LT",
    "LE",
    "GT",
    "GE",
    "INC_NEITHER",
    "INC_LEFT",
    "INC_RIGHT",
    "INC_BOTH",
    "IN",
    "NOT_IN",
    "check",
    "check_int",
    "check_positive_int",
    "check_non_negative_int",
    "check_float",
    "check_positive_float",
    "check_non_negative_float",
    "check_number",
    "check_bool",
    "check_int_range",
    "check_float_range",
    "check_number_range",
    "check_string",
    "check_subclass",
    "check_value_type",
    "check_type_name",
    "check_isinstance",
    "args_type_check",
]


def _holds(rel: int, a: Any, b: Any) -> bool:
    return rel in _BINARY and _BINARY[rel][1](a, b)


def _prefix(prim_name: str | None, arg_name: str | None, sep: str = " ") -> str:
    prim = f"For '{prim_name}', the" if prim_name else "The"
    return f"{prim}{sep}" + (f"'{arg_name}'" if arg_name else "input value")


def _check_number(arg_value, value, rel, arg_type, arg_name=None, prim_name=None):
    info = _prefix(prim_name, arg_name, sep=" ")
    if not isinstance(arg_value, arg_type):
        raise TypeError(f"{info} must be {arg_type.__name__}, but got '{type(arg_value).__name__}'")
    if math.isinf(arg_value) or math.isnan(arg_value):
        raise ValueError(f"{info} must be a legal value, but got '{arg_value}'.")
    mismatch = isinstance(arg_value, bool)
    if mismatch or not _holds(rel, arg_value, value):
        msg = (
            f"{info} must be {arg_type.__name__} and must {_BINARY[rel][0]} {value}, "
            f"but got '{arg_value}' with type '{type(arg_value).__name__}'."
        )
        raise (TypeError if mismatch else ValueError)(msg)
    return arg_value


def check(arg_name, arg_value, value_name, value, rel=EQ, prim_name=None, excp_cls=ValueError):
    if not _holds(rel, arg_value, value):
        prefix = f"For '{prim_name}', the" if prim_name else "The"
        subject = f"{prefix} '{arg_name}'" if " " not in arg_name else f"{prefix} {arg_name}"
        raise excp_cls(f"{subject} should be {_BINARY[rel][0]} {value_name}: {value}, but got {arg_value}.")
    return arg_value


def check_int(arg_value, value, rel, arg_name=None, prim_name=None):
    return _check_number(arg_value, value, rel, int, arg_name, prim_name)


def check_positive_int(arg_value, arg_name=None, prim_name=None):
    return _check_number(arg_value, 0, GT, int, arg_name, prim_name)


def check_non_negative_int(arg_value, arg_name=None, prim_name=None):
    return _check_number(arg_value, 0, GE, int, arg_name, prim_name)


def check_float(arg_value, value, rel, arg_name=None, prim_name=None):
    return _check_number(arg_value, value, rel, float, arg_name, prim_name)


def check_positive_float(arg_value, arg_name=None, prim_name=None):
    return _check_number(arg_value, 0, GT, float, arg_name, prim_name)


def check_non_negative_float(arg_value, arg_name=None, prim_name=None):
    return _check_number(arg_value, 0, GE, float, arg_name, prim_name)


def check_number(arg_name, arg_value, value, rel, prim_name):
    if not _holds(rel, arg_value, value):
        raise ValueError(
            f"For '{prim_name}', the argument '{arg_name}' must {_BINARY[rel][0]} {value}, "
            f"but got {arg_value}."
        )
    return arg_value


def check_isinstance(arg_name, arg_value, classes):
    if not isinstance(arg_value, classes):
        raise ValueError(f"The parameter '{arg_name}' must be isinstance of {classes}, but got {arg_value}.")
    return arg_value


def check_bool(arg_value, arg_name=None, prim_name=None):
    if not isinstance(arg_value, bool):
        raise TypeError(f"{_prefix(prim_name, arg_name)} must be a bool, but got {type(arg_value).__name__}.")
    return arg_value


def check_number_range(arg_value, lower_limit, upper_limit, rel, value_type, arg_name=None, prim_name=None):
    info = _prefix(prim_name, arg_name)
    if not isinstance(arg_value, (np.ndarray, np.generic, value_type)) or isinstance(arg_value, bool):
        raise TypeError(f"{info} must be '{value_type.__name__}',  but got '{type(arg_value).__name__}'.")
    text, holds = _RANGE[rel]
    if not holds(arg_value, lower_limit, upper_limit):
        raise ValueError(
            f"{info} must be in range of {text.format(lower_limit, upper_limit)}, "
            f"but got {arg_value} with type '{type(arg_value).__name__}'."
        )
    return arg_value


def check_int_range(arg_value, lower_limit, upper_limit, rel, arg_name=None, prim_name=None):
    return check_number_range(arg_value, lower_limit, upper_limit, rel, int, arg_name, prim_name)


def check_float_range(arg_value, lower_limit, upper_limit, rel, arg_name=None, prim_name=None):
    return check_number_range(arg_value, lower_limit, upper_limit, rel, float, arg_name, prim_name)


def check_string(arg_value, valid_values, arg_name=None, prim_name=None):
    if not (isinstance(arg_value, str) and arg_value in valid_values):
        prefix = f"For '{prim_name}', the" if prim_name else "The"
        raise ValueError(
            f"{prefix} '{arg_name or 'parameter'}' must be str and must be in '{valid_values}',"
            f" but got '{arg_value}'."
        )
    return arg_value


def check_subclass(arg_name, type_, template_types, prim_name, addition_error_info=None):
    """Whether ``type_`` is one of ``template_types`` (dtypes compare by identity here)."""
    templates = template_types if isinstance(template_types, Iterable) else (template_types,)
    if not any(type_ is t or type_ == t for t in templates):
        extra = f" {addition_error_info}" if addition_error_info else ""
        raise TypeError(
            f"For '{prim_name}', the element of '{arg_name}' must be "
            f"{'one of ' if len(templates) > 1 else ''}{', '.join(str(t) for t in templates)}, "
            f"but got {type_}{extra}."
        )
    return type_


def _type_names(valid_types) -> list:
    return [t.__name__ if hasattr(t, "__name__") else str(t) for t in valid_types]


def check_value_type(arg_name, arg_value, valid_types, prim_name=None):
    valid_types = tuple(valid_types) if isinstance(valid_types, Iterable) else (valid_types,)
    bad_bool = isinstance(arg_value, bool) and bool not in valid_types
    if bad_bool or not isinstance(arg_value, valid_types):
        names = _type_names(valid_types)
        prefix = f"For '{prim_name}', the" if prim_name else "The"
        many = len(valid_types) > 1
        raise TypeError(
            f"{prefix} type of '{arg_name}' should be {'one of ' if many else ''}"
            f"'{names if many else names[0]}', but got type '{type(arg_value).__name__}'."
        )
    if isinstance(arg_value, float) and float not in valid_types:
        arg_value = round(arg_value, 6)
    return arg_value


def check_type_name(arg_name, arg_type, valid_types, prim_name):
    valid_types = tuple(valid_types) if isinstance(valid_types, Iterable) else (valid_types,)
    if arg_type not in valid_types:
        names = _type_names(valid_types)
        prefix = f"For '{prim_name}', the" if prim_name else "The"
        many = len(valid_types) > 1
        shown = arg_type.__name__ if hasattr(arg_type, "__name__") else repr(arg_type)
        raise TypeError(
            f"{prefix} '{arg_name}' should be {'one of ' if many else ''}"
            f"{names if many else names[0]}, but got '{shown}'."
        )
    return arg_type


def args_type_check(*type_args, **type_kwargs):
    """Decorator: the bound arguments named here must be instances of the given types (or None)."""

    def decorate(func):
        sig = inspect.signature(func)
        bound_types = sig.bind_partial(*type_args, **type_kwargs).arguments

        @wraps(func)
        def wrapper(*args, **kwargs):
            types = bound_types.get("kwargs", bound_types)
            arguments = sig.bind(*args, **kwargs).arguments
            arguments = arguments.get("kwargs", arguments)
            for name, value in arguments.items():
                if name in types and value is not None and not isinstance(value, types[name]):
                    raise TypeError(f"The parameter '{name}' must be {types[name]}, but got {type(value)}")
            return func(*args, **kwargs)

        return wrapper

    return decorate
