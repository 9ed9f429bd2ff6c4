"""``mindspore.dataset.vision``: the ``Inter`` enum only; the transforms are not provided
(each raises ``MissingAPIError`` on access)."""

import enum

from ..._validate import missing as _missing

__all__ = ["Inter"]


class Inter(enum.IntEnum):
    """``mindspore.dataset.vision.Inter``: interpolation modes (MindSpore's values)."""

    NEAREST = 0
    ANTIALIAS = 1
    LINEAR = 2
    BILINEAR = 2
    CUBIC = 3
    BICUBIC = 3
    AREA = 4
    PILCUBIC = 5


def __getattr__(name: str):
    raise _missing("mindspore.dataset.vision", name)
