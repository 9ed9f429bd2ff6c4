"""Paddle's own Tensor members, captured before the MindSpore members are installed.

The layer's implementations call these (never the installed dispatchers), and
:func:`~paddle_mindspore.uninstall_tensor_methods` puts them back.
"""

from __future__ import annotations

from typing import Any

import paddle
from paddle.base.framework import EagerParamBase

__all__ = ["ABSENT", "paddle_member", "own_member"]

ABSENT = object()
_OWN: dict[tuple[type, str], Any] = {}


def own_member(cls: type, name: str) -> Any:
    """``cls.__dict__[name]`` as Paddle defined it (``ABSENT`` if Paddle defines none there)."""
    key = (cls, name)
    if key not in _OWN:
        _OWN[key] = cls.__dict__.get(name, ABSENT)
    return _OWN[key]


def paddle_member(cls: type, name: str) -> Any:
    """The member Paddle's ``cls.name`` resolves to (own or inherited), before installation."""
    for klass in cls.__mro__:
        if klass in (paddle.Tensor, EagerParamBase):
            found = own_member(klass, name)
            if found is not ABSENT:
                return found
        elif name in klass.__dict__:
            return klass.__dict__[name]
    raise AttributeError(f"paddle.Tensor has no member {name!r}")
