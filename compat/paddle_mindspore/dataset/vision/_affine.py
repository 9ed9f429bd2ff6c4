"""``RandomRotation`` and ``RandomAffine``.

NOTE [ Affine arithmetic ]: the map is the inverse matrix about the image centre ``(w / 2,
h / 2)`` in pixel-centre coordinates (torchvision's formula: rotation, shear in degrees, scale,
translation in pixels). Nearest: Pillow's ``Image.transform(AFFINE)``; bilinear and bicubic on
numpy images: OpenCV's fixed-point warp (NOTE [ Warp arithmetic ] in ``_warp.py``); both give
MindSpore 2.10's recorded outputs bit for bit. ``Inter.AREA`` is bilinear (OpenCV's
``warpAffine`` treats it so; recorded). One MindSpore quirk kept: on numpy images with nearest
and bicubic resampling the ``fill_value`` triple is applied in reverse channel order
(``(1, 2, 3)`` fills ``[3, 2, 1]``), with bilinear in the given order (recorded; area, the
same path, taken alike: its recording used a grey fill). Pillow images go through Pillow with every mode.
Parameters are drawn from the pipeline's generator (``dataset.config``), not MindSpore's.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from PIL import Image

from ..._validate import not_provided
from ..config import generator
from ._types import Inter
from ._warp import warp_affine

__all__ = ["RandomRotation", "RandomAffine"]

_RESAMPLE = {Inter.NEAREST: Image.NEAREST, Inter.BILINEAR: Image.BILINEAR,
             Inter.BICUBIC: Image.BICUBIC, Inter.AREA: Image.BILINEAR}


def _resample(value: Any, api: str) -> int:
    if value not in _RESAMPLE:
        names = sorted(r.name for r in _RESAMPLE)
        raise not_provided(f"vision.{api}(resample={value!r})", f"use one of {names}")
    return _RESAMPLE[value]


def _pair(value: Any, api: str, name: str, symmetric: bool = True) -> tuple[float, float]:
    if isinstance(value, int | float) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"{api}: {name} should be non-negative when a single number, got {value}.")
        return (-float(value), float(value)) if symmetric else (float(value), float(value))
    if isinstance(value, list | tuple) and len(value) == 2 and value[0] <= value[1]:
        return float(value[0]), float(value[1])
    raise ValueError(f"{api}: {name} should be a number or a (min, max) sequence, got {value!r}.")


def _draw(low: float, high: float) -> float:
    return low if low == high else float(generator().uniform(low, high))


def _fill(value: Any, channels: int, numpy_input: bool) -> Any:
    fill = (value,) * 3 if isinstance(value, int) else tuple(int(v) for v in value)
    if numpy_input:
        fill = fill[::-1]  # MindSpore's quirk, see NOTE [ Affine arithmetic ]
    return fill[0] if channels == 1 else fill


def inverse_matrix(center: tuple[float, float], angle: float, translate: tuple[float, float], scale: float,
                   shear: tuple[float, float]) -> list[float]:
    """The affine map from output to input pixels (torchvision's ``_get_inverse_affine_matrix``)."""
    rot, sx, sy = math.radians(angle), math.radians(shear[0]), math.radians(shear[1])
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    m = [d / scale, -b / scale, 0.0, -c / scale, a / scale, 0.0]
    (cx, cy), (tx, ty) = center, translate
    m[2] = m[0] * (-cx - tx) + m[1] * (-cy - ty) + cx
    m[5] = m[3] * (-cx - tx) + m[4] * (-cy - ty) + cy
    return m


def _expanded_size(w: int, h: int, angle: float) -> tuple[float, float]:
    """OpenCV's ``RotatedRect(c, (w, h), angle).boundingRect2f()`` width and height (float32, as
    OpenCV computes the corners), which MindSpore's ``expand=True`` output takes."""
    f32 = np.float32
    rad = angle * math.pi / 180.0
    b, a = f32(math.cos(rad)) * f32(0.5), f32(math.sin(rad)) * f32(0.5)
    dx = [-a * f32(h) - b * f32(w), a * f32(h) - b * f32(w)]
    dy = [b * f32(h) - a * f32(w), -b * f32(h) - a * f32(w)]
    xs, ys = dx + [-v for v in dx], dy + [-v for v in dy]
    return float(max(xs) - min(xs)), float(max(ys) - min(ys))


def _out_shape(image: np.ndarray, size: tuple[int, int]) -> tuple[int, ...]:
    return (size[1], size[0], *image.shape[2:])


def _transform(image: Any, matrix_of: Any, resample: int, fill_value: Any, size_of: Any = None) -> Any:
    """``image`` warped by ``matrix_of(w, h)`` into ``size_of(w, h)`` (default its own size)."""
    numpy_input = isinstance(image, np.ndarray)
    if numpy_input and resample != Image.NEAREST and image.dtype == np.uint8:
        data = image[..., None] if image.ndim == 2 else image
        h, w = data.shape[:2]
        size = size_of(w, h) if size_of else (w, h)
        m = matrix_of(w, h)  # pixel centres -> OpenCV's integer coordinates
        m = [m[0], m[1], m[2] + 0.5 * (m[0] + m[1] - 1), m[3], m[4], m[5] + 0.5 * (m[3] + m[4] - 1)]
        reverse = resample == Image.BICUBIC  # recorded: bicubic fills reversed, bilinear in order
        fill = _fill(fill_value, 3, reverse)[: data.shape[2]] if data.shape[2] <= 3 else (0,) * data.shape[2]
        out = warp_affine(data, m, 4 if resample == Image.BICUBIC else 2, fill, size)
        return out.reshape(_out_shape(image, size))
    pil = image
    if numpy_input:
        pil = Image.fromarray(image[..., 0] if image.ndim == 3 and image.shape[2] == 1 else image)
    w, h = pil.size
    size = size_of(w, h) if size_of else (w, h)
    fill = _fill(fill_value, len(pil.getbands()), numpy_input)
    out = pil.transform(size, Image.AFFINE, matrix_of(w, h), resample, fillcolor=fill)
    return np.asarray(out).reshape(_out_shape(image, size)) if numpy_input else out


class RandomRotation:
    """``RandomRotation(degrees, resample=Inter.NEAREST, expand=False, center=None, fill_value=0)``:
    rotate counter-clockwise by an angle drawn from ``degrees`` (a number ``d``: ``[-d, d]``)
    about ``center`` (default the image centre). ``expand=True``: MindSpore's OpenCV recipe, the
    output the rounded size of the rotated rectangle's float32 bounding box, the rotation shifted
    by half the size difference (so a given ``center`` moves the content as in MindSpore); on a
    Pillow image, Pillow's ``rotate(expand=True)``, as MindSpore does."""

    def __init__(self, degrees: Any, resample: Inter = Inter.NEAREST, expand: bool = False,
                 center: Any = None, fill_value: Any = 0):
        self.degrees = _pair(degrees, "RandomRotation", "degrees")
        self.resample = _resample(resample, "RandomRotation")
        self.expand, self.center, self.fill_value = bool(expand), center, fill_value

    def __call__(self, image: Any) -> Any:
        angle = _draw(*self.degrees)
        if self.expand and isinstance(image, Image.Image):  # MindSpore hands Pillow images to Pillow
            fill = _fill(self.fill_value, len(image.getbands()), False)
            return image.rotate(angle, self.resample, expand=True, center=self.center, fillcolor=fill)

        def size(w: int, h: int) -> tuple[int, int]:
            bw, bh = _expanded_size(w, h, angle)
            return int(np.rint(bw)), int(np.rint(bh))  # OpenCV's Size2f -> Size: round half to even

        def matrix(w: int, h: int) -> list[float]:
            # a given centre is in integer pixel coordinates (OpenCV's), the default the image's middle
            center = (w * 0.5, h * 0.5)
            if self.center is not None:
                center = (self.center[0] + 0.5, self.center[1] + 0.5)
            shift = (0.0, 0.0)
            if self.expand:
                bw, bh = _expanded_size(w, h, angle)
                shift = (bw / 2.0 - w / 2.0, bh / 2.0 - h / 2.0)
            return inverse_matrix(center, -angle, shift, 1.0, (0.0, 0.0))

        return _transform(image, matrix, self.resample, self.fill_value, size if self.expand else None)


def _shear(shear: Any) -> tuple[tuple[float, float], tuple[float, float]]:
    if shear is None:
        return (0.0, 0.0), (0.0, 0.0)
    if isinstance(shear, list | tuple) and len(shear) == 4:
        return _pair(shear[:2], "RandomAffine", "shear"), _pair(shear[2:], "RandomAffine", "shear")
    return _pair(shear, "RandomAffine", "shear"), (0.0, 0.0)


class RandomAffine:
    """``RandomAffine(degrees, translate=None, scale=None, shear=None, resample=Inter.NEAREST,
    fill_value=0)``: rotation from ``degrees``, translation from ``translate`` (fractions of the
    width and height: ``(x_min, x_max)`` or ``(x_min, x_max, y_min, y_max)``), scale from
    ``scale`` ``(min, max)``, shear in degrees from ``shear`` (a number, an x range, or x and y
    ranges), each drawn uniformly."""

    def __init__(self, degrees: Any, translate: Any = None, scale: Any = None, shear: Any = None,
                 resample: Inter = Inter.NEAREST, fill_value: Any = 0):
        self.degrees = _pair(degrees, "RandomAffine", "degrees")
        translate = (0.0, 0.0, 0.0, 0.0) if translate is None else tuple(translate)
        if len(translate) not in (2, 4) or not all(-1 <= t <= 1 for t in translate):
            raise ValueError(f"RandomAffine: translate should be 2 or 4 values in [-1, 1], got "
                             f"{translate!r}.")
        self.translate = translate + (0.0, 0.0) if len(translate) == 2 else translate
        self.scale = (1.0, 1.0) if scale is None else _pair(scale, "RandomAffine", "scale", symmetric=False)
        self.shear = _shear(shear)
        self.resample = _resample(resample, "RandomAffine")
        self.fill_value = fill_value

    def __call__(self, image: Any) -> Any:
        angle = _draw(*self.degrees)
        fx, fy = _draw(*self.translate[:2]), _draw(*self.translate[2:])
        scale = _draw(*self.scale)
        shear = (_draw(*self.shear[0]), _draw(*self.shear[1]))

        def matrix(w: int, h: int) -> list[float]:
            return inverse_matrix((w * 0.5, h * 0.5), angle, (fx * w, fy * h), scale, shear)

        return _transform(image, matrix, self.resample, self.fill_value)
