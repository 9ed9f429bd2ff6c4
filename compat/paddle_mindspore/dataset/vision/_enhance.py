"""Pixel transforms of the auto-augment policies: ``Invert``, ``Equalize``, ``AutoContrast``,
``RandomPosterize``, ``RandomSolarize``, ``RandomColor``, ``RandomSharpness``, ``RandomColorAdjust``.

NOTE [ Enhance arithmetic ]: MindSpore 2.10 computes these with OpenCV on uint8 HWC arrays;
recorded outputs fix the arithmetic reproduced here: grey is OpenCV's fixed-point
``(4899 R + 9617 G + 1868 B + 2^13) >> 14``; blends ``img * a + other * (1 - a)`` are float32
rounded half to even; brightness is ``img * factor`` likewise; AutoContrast's lookup table
truncates ``i * scale + offset`` computed in float32; Equalize is OpenCV's ``equalizeHist``
per channel; Sharpness blends with the 3x3 ``[[1,1,1],[1,5,1],[1,1,1]] / 13`` smoothing (border
pixels kept, smoothed values rounded); contrast is Pillow's ``ImageEnhance.Contrast``. All are
bit-exact against the recording except ``RandomColor`` with a degree above 1, where MindSpore's
OpenCV blend rounds exact halves down where float32 rounds up (a difference of 1 at those
pixels), and ``RandomColorAdjust`` with several factors at once (each alone is exact; chained,
MindSpore's outputs are none of ours exactly: see compat/README.md).
Random parameters come from the pipeline's generator (``dataset.config``), not MindSpore's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PIL import Image, ImageEnhance

from ..config import generator
from ._hsv import shift_hue
from ._pixels import as_numpy

__all__ = ["Invert", "Equalize", "AutoContrast", "RandomPosterize", "RandomSolarize", "RandomColor",
           "RandomSharpness", "RandomColorAdjust", "pixel_op"]


def pixel_op(image: Any, api: str, fn: Any) -> Any:
    """Apply ``fn`` to the uint8 HWC array of ``image``; a Pillow image comes back as one."""
    data = as_numpy(image, api)
    if data.dtype != np.uint8:
        raise RuntimeError(f"{api}: the input image should be uint8, but got {data.dtype}.")
    out = fn(data[..., None] if data.ndim == 2 else data)
    out = out[..., 0] if data.ndim == 2 else out
    return Image.fromarray(out) if isinstance(image, Image.Image) else out


def _saturate(values: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(values), 0, 255).astype(np.uint8)


def _blend(image: np.ndarray, other: np.ndarray, alpha: float) -> np.ndarray:
    a = np.float32(alpha)
    return _saturate(image.astype(np.float32) * a + other.astype(np.float32) * np.float32(1 - alpha))


def _grey(image: np.ndarray) -> np.ndarray:
    if image.shape[2] == 1:
        return image
    rgb = image.astype(np.int64)
    grey = (rgb[..., 0] * 4899 + rgb[..., 1] * 9617 + rgb[..., 2] * 1868 + (1 << 13)) >> 14
    return np.repeat(grey[..., None], image.shape[2], axis=2)


def _range(value: Any, api: str, name: str, centre: float | None = None) -> tuple[float, float]:
    """A ``(min, max)`` pair, or ``(max(0, centre - v), centre + v)`` for one number ``v``."""
    if isinstance(value, int | float) and not isinstance(value, bool) and centre is not None:
        if value < 0:
            raise ValueError(f"{api}: {name} should be non-negative, got {value}.")
        return max(0.0, centre - value), centre + value
    if isinstance(value, list | tuple) and len(value) == 2 and value[0] <= value[1]:
        return value[0], value[1]
    raise ValueError(f"{api}: {name} should be a (min, max) sequence with min <= max, got {value!r}.")


def _uniform(low: float, high: float) -> float:
    return float(low) if low == high else float(generator().uniform(low, high))


def _integer(low: int, high: int) -> int:
    return int(low) if low == high else int(generator().integers(low, high + 1))


class Invert:
    """``255 - pixel``."""

    def __call__(self, image: Any) -> Any:
        return pixel_op(image, "Invert", lambda a: 255 - a)


class Equalize:
    """OpenCV's ``equalizeHist`` on each channel."""

    def __call__(self, image: Any) -> Any:
        return pixel_op(image, "Equalize", lambda a: np.stack(
            [_equalized(a[..., c]) for c in range(a.shape[2])], axis=2))


def _equalized(channel: np.ndarray) -> np.ndarray:
    hist = np.bincount(channel.ravel(), minlength=256)
    first = int(np.flatnonzero(hist)[0])
    if hist[first] == channel.size:
        return np.full_like(channel, first)
    scale = np.float32(255.0) / np.float32(channel.size - hist[first])
    lut = np.zeros(256, np.float32)
    lut[first + 1:] = np.cumsum(hist[first + 1:]).astype(np.float32) * scale
    return _saturate(lut)[channel]


class AutoContrast:
    """``AutoContrast(cutoff=0.0, ignore=None)``: per channel, stretch ``[lo, hi]`` (after cutting
    ``cutoff`` percent of the pixels off each end of the histogram, ``ignore`` values left out)
    to ``[0, 255]``."""

    def __init__(self, cutoff: float = 0.0, ignore: Any = None):
        if not 0 <= cutoff < 50:
            raise ValueError(f"AutoContrast: cutoff should be in range [0, 50), got {cutoff}.")
        self.cutoff = float(cutoff)
        self.ignore = [] if ignore is None else [ignore] if isinstance(ignore, int) else list(ignore)

    def __call__(self, image: Any) -> Any:
        return pixel_op(image, "AutoContrast", lambda a: np.stack(
            [self._channel(a[..., c]) for c in range(a.shape[2])], axis=2))

    def _channel(self, channel: np.ndarray) -> np.ndarray:
        hist = np.bincount(channel.ravel(), minlength=256)
        hist[self.ignore] = 0
        if self.cutoff:
            cut = int(hist.sum() * self.cutoff / 100)
            hist = _cut(_cut(hist, cut)[::-1], cut)[::-1]
        present = np.flatnonzero(hist)
        if present.size == 0 or present[-1] <= present[0]:
            return channel.copy()
        lo, hi = int(present[0]), int(present[-1])
        scale = np.float32(255.0) / np.float32(hi - lo)
        values = np.arange(256, dtype=np.float32) * scale + (-np.float32(lo) * scale)
        return np.clip(np.trunc(values), 0, 255).astype(np.uint8)[channel]


def _cut(hist: np.ndarray, count: int) -> np.ndarray:
    """Remove ``count`` pixels from the low end of ``hist``."""
    hist = hist.copy()
    for i in range(256):
        if count <= 0:
            break
        taken = min(count, hist[i])
        hist[i] -= taken
        count -= taken
    return hist


class RandomPosterize:
    """``RandomPosterize(bits=(8, 8))``: keep the ``bits`` high bits (drawn from the range)."""

    def __init__(self, bits: Any = (8, 8)):
        low, high = (bits, bits) if isinstance(bits, int) else _range(bits, "RandomPosterize", "bits")
        if not 1 <= low <= high <= 8:
            raise ValueError(f"RandomPosterize: bits should be in range [1, 8], got {bits!r}.")
        self.bits = (int(low), int(high))

    def __call__(self, image: Any) -> Any:
        mask = np.uint8((0xFF << (8 - _integer(*self.bits))) & 0xFF)
        return pixel_op(image, "RandomPosterize", lambda a: a & mask)


class RandomSolarize:
    """``RandomSolarize(threshold=(0, 255))``: invert the pixels at or above a threshold drawn
    from the range."""

    def __init__(self, threshold: Any = (0, 255)):
        low, high = _range(threshold, "RandomSolarize", "threshold")
        if not 0 <= low <= high <= 255:
            raise ValueError(f"RandomSolarize: threshold should be in range [0, 255], got {threshold!r}.")
        self.threshold = (int(low), int(high))

    def __call__(self, image: Any) -> Any:
        level = _integer(*self.threshold)
        return pixel_op(image, "RandomSolarize", lambda a: np.where(a >= level, 255 - a, a).astype(np.uint8))


class RandomColor:
    """``RandomColor(degrees=(0.1, 1.9))``: blend with the grey image by a degree drawn from the
    range (0 grey, 1 unchanged)."""

    def __init__(self, degrees: Any = (0.1, 1.9)):
        self.degrees = _range(degrees, "RandomColor", "degrees")

    def __call__(self, image: Any) -> Any:
        degree = _uniform(*self.degrees)
        return pixel_op(image, "RandomColor", lambda a: _blend(a, _grey(a), degree))


def _smoothed(image: np.ndarray) -> np.ndarray:
    if min(image.shape[:2]) < 3:
        return image
    data = image.astype(np.float64)
    h, w = image.shape[:2]
    window = sum(data[dy:h - 2 + dy, dx:w - 2 + dx] for dy in range(3) for dx in range(3))
    out = data.copy()
    out[1:-1, 1:-1] = (window + 4 * data[1:-1, 1:-1]) / 13
    return np.rint(out)


class RandomSharpness:
    """``RandomSharpness(degrees=(0.1, 1.9))``: blend with the smoothed image (0 smooth, 1
    unchanged, above 1 sharper)."""

    def __init__(self, degrees: Any = (0.1, 1.9)):
        self.degrees = _range(degrees, "RandomSharpness", "degrees")

    def __call__(self, image: Any) -> Any:
        degree = _uniform(*self.degrees)
        return pixel_op(image, "RandomSharpness", lambda a: _blend(a, _smoothed(a), degree))


class RandomColorAdjust:
    """``RandomColorAdjust(brightness=(1, 1), contrast=(1, 1), saturation=(1, 1), hue=(0, 0))``:
    factors drawn from each range (a number ``v`` means ``[max(0, 1 - v), 1 + v]``; for ``hue``
    ``[-v, v]``, within ``[-0.5, 0.5]``), the four adjustments applied in a random order, as
    MindSpore does (it gave 6 different outputs for three fixed factors, observed). The hue shift
    is MindSpore's OpenCV HSV arithmetic (NOTE [ Hue arithmetic ] in ``_hsv.py``)."""

    def __init__(self, brightness: Any = (1, 1), contrast: Any = (1, 1), saturation: Any = (1, 1),
                 hue: Any = (0, 0)):
        api = "RandomColorAdjust"
        self.brightness = _range(brightness, api, "brightness", 1.0)
        self.contrast = _range(contrast, api, "contrast", 1.0)
        self.saturation = _range(saturation, api, "saturation", 1.0)
        if isinstance(hue, int | float) and not isinstance(hue, bool):
            if not 0 <= hue <= 0.5:
                raise ValueError(f"{api}: hue should be in [0, 0.5], got {hue}.")
            hue = (-hue, hue)
        self.hue = _range(hue, api, "hue")
        if not -0.5 <= self.hue[0] <= self.hue[1] <= 0.5:
            raise ValueError(f"{api}: hue should be a (min, max) sequence within [-0.5, 0.5], got {hue!r}.")

    def __call__(self, image: Any) -> Any:
        # MindSpore shifts the hue whenever its range is not (0, 0): a drawn 0 still converts
        # to HSV and back, which changes some pixels (NOTE [ Hue arithmetic ])
        hue = None if self.hue == (0, 0) else _uniform(*self.hue)
        factors = [_uniform(*self.brightness), _uniform(*self.contrast), _uniform(*self.saturation), hue]
        order = generator().permutation(4).tolist()
        return pixel_op(image, "RandomColorAdjust", lambda a: _adjusted(a, factors, order))


def _brightness(image: np.ndarray, factor: float) -> np.ndarray:
    return _saturate(image.astype(np.float32) * np.float32(factor))


def _contrast(image: np.ndarray, factor: float) -> np.ndarray:
    pil = Image.fromarray(image[..., 0] if image.shape[2] == 1 else image)
    return np.asarray(ImageEnhance.Contrast(pil).enhance(factor)).reshape(image.shape)


def _saturation(image: np.ndarray, factor: float) -> np.ndarray:
    return _blend(image, _grey(image), factor)


_ADJUSTMENTS = (_brightness, _contrast, _saturation, shift_hue)


def _adjusted(image: np.ndarray, factors: list[float | None], order: list[int]) -> np.ndarray:
    for index in order:
        if factors[index] is not None and (index == 3 or factors[index] != 1):
            image = _ADJUSTMENTS[index](image, factors[index])
    return image
