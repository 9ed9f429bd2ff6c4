"""``mindspore.dataset.transforms``: ``TypeCast``, ``OneHot`` and ``Compose``."""

from ..._validate import missing as _missing
from ._ops import Compose, OneHot, TypeCast

__all__ = ["TypeCast", "OneHot", "Compose"]


def __getattr__(name: str):
    raise _missing("mindspore.dataset.transforms", name)
