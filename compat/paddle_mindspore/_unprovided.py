"""Names that exist so that modules importing them load, and raise when used.

mindformers imports, at module level, MindSpore APIs that have nothing to do on one device
in PyNative mode with this layer (profilers, MindRecord datasets, Ascend kernels, pipeline
and multi-device cells, fault tolerance). Without the names, ``import mindformers`` fails
before any model can be built. Each name here is a class or function that raises
:class:`MissingAPIError` (naming the API) the moment it is instantiated or called, so
nothing runs silently in place of MindSpore's behaviour. A class stays a class, so
``isinstance`` checks against it answer False and subclassing it works until the subclass
is instantiated.
"""

from __future__ import annotations

from typing import Any

from ._validate import missing

__all__ = ["is_unprovided", "unprovided_class", "unprovided_function", "unprovided_object"]

# set on every stand-in, so that an audit of the layer counts it as missing, not provided
_MARK = "__ms_unprovided__"


def is_unprovided(obj: Any) -> bool:
    """Whether ``obj`` is one of this module's stand-ins (importable, raises when used)."""
    return getattr(type(obj), _MARK, False) is True or getattr(obj, _MARK, False) is True


def _split(qualname: str) -> tuple[str, str]:
    module, _, name = qualname.rpartition(".")
    return module, name


def unprovided_class(qualname: str) -> type:
    """A class named like ``qualname`` whose construction raises ``MissingAPIError``."""
    module, name = _split(qualname)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise missing(module, name)

    return type(
        name,
        (),
        {
            "__init__": __init__,
            "__module__": module,
            "__doc__": f"``{qualname}``: not provided (raises when constructed).",
            _MARK: True,
        },
    )


def unprovided_function(qualname: str):
    """A function named like ``qualname`` that raises ``MissingAPIError`` when called."""
    module, name = _split(qualname)

    def stand_in(*args: Any, **kwargs: Any) -> Any:
        raise missing(module, name)

    stand_in.__name__ = stand_in.__qualname__ = name
    stand_in.__module__ = module
    stand_in.__doc__ = f"``{qualname}``: not provided (raises when called)."
    setattr(stand_in, _MARK, True)
    return stand_in


class _UnprovidedObject:
    """An object whose every attribute raises ``MissingAPIError``."""

    __ms_unprovided__ = True

    def __init__(self, qualname: str):
        object.__setattr__(self, "_qualname", qualname)

    def __getattr__(self, name: str) -> Any:
        module, obj = _split(self._qualname)
        raise missing(module, f"{obj}.{name}")

    def __repr__(self) -> str:
        return f"<{self._qualname}: not provided>"


def unprovided_object(qualname: str) -> Any:
    """An object named like ``qualname`` (a module-level instance in MindSpore) whose attributes raise."""
    return _UnprovidedObject(qualname)
