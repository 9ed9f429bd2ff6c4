"""``mindspore.dataset.transforms``: ``TypeCast``, ``OneHot``, ``Compose`` and ``Duplicate``."""

from ..._validate import missing as _missing
from . import transforms
from ._ops import Compose, Duplicate, OneHot, TypeCast

__all__ = ["transforms", "TypeCast", "OneHot", "Compose", "Duplicate"]


def __getattr__(name: str):
    raise _missing("mindspore.dataset.transforms", name)
