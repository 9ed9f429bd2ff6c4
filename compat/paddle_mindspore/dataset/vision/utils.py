"""``mindspore.dataset.vision.utils``: the enumerations (the same as ``mindspore.dataset.vision``'s)."""

from ._types import Border, Inter

__all__ = ["Border", "Inter"]
