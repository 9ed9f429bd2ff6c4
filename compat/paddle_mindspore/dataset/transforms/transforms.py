"""``mindspore.dataset.transforms.transforms``: the same transforms as ``mindspore.dataset.transforms``."""

from ._ops import Compose, Duplicate, OneHot, TypeCast

__all__ = ["TypeCast", "OneHot", "Compose", "Duplicate"]
