"""``mindspore.common.recompute``: where MindSpore defines ``mindspore.recompute``."""

from .._api import recompute

__all__ = ["recompute"]
