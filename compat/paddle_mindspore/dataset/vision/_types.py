"""``Inter`` and ``Border``: MindSpore's interpolation and padding modes, with Pillow's filters."""

from __future__ import annotations

from enum import Enum

from PIL import Image

__all__ = ["Inter", "Border", "pil_filter"]


class Inter(Enum):
    NEAREST = 0
    ANTIALIAS = 1
    BILINEAR = LINEAR = 2
    BICUBIC = CUBIC = 3
    AREA = 4
    PILCUBIC = 5


class Border(str, Enum):
    CONSTANT = "constant"
    EDGE = "edge"
    REFLECT = "reflect"
    SYMMETRIC = "symmetric"


_PIL = {
    Inter.NEAREST: Image.NEAREST,
    Inter.BILINEAR: Image.BILINEAR,
    Inter.BICUBIC: Image.BICUBIC,
    Inter.ANTIALIAS: Image.LANCZOS,
    Inter.PILCUBIC: Image.BICUBIC,
    Inter.AREA: Image.BOX,
}


def pil_filter(interpolation: Inter) -> int:
    if not isinstance(interpolation, Inter):
        raise TypeError(
            f"Argument interpolation with value {interpolation!r} is not of type [<enum 'Inter'>], "
            f"but got {type(interpolation)}."
        )
    return _PIL[interpolation]
