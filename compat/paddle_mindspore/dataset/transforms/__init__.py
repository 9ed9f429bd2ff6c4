"""``mindspore.dataset.transforms``: ``TypeCast``, ``OneHot``, ``Compose`` and ``Duplicate``."""

from ..._validate import missing as _missing
from ._ops import Compose, Duplicate, OneHot, TypeCast

__all__ = ["TypeCast", "OneHot", "Compose", "Duplicate"]


def __getattr__(name: str):
    raise _missing("mindspore.dataset.transforms", name)
