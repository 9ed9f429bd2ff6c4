"""Resize and crops; random choices come from ``dataset.config``'s generator."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from PIL import Image

from ..._validate import not_provided
from ..config import generator
from ._cv_resize import resize_linear, resize_nearest
from ._types import Inter, pil_filter

__all__ = [
    "Resize", "CenterCrop", "RandomCrop", "RandomResizedCrop", "RandomHorizontalFlip", "RandomVerticalFlip",
]


def _size(size: Any, api: str) -> tuple[int, int] | int:
    if isinstance(size, int) and not isinstance(size, bool) and size > 0:
        return size
    if (
        isinstance(size, list | tuple)
        and len(size) in (1, 2)
        and all(isinstance(s, int) and s > 0 for s in size)
    ):
        return (size[0], size[0]) if len(size) == 1 else (size[0], size[1])
    raise TypeError(
        f"{api}: size should be a positive int or a sequence of one or two positive ints, got {size!r}."
    )


def _hw(image: Any) -> tuple[int, int]:
    return (image.height, image.width) if isinstance(image, Image.Image) else image.shape[:2]


def _resize(image: Any, height: int, width: int, interpolation: Inter) -> Any:
    """Pillow images by Pillow (as MindSpore); arrays as OpenCV (NOTE [ Resize arithmetic ])."""
    if isinstance(image, Image.Image):
        return image.resize((width, height), pil_filter(interpolation))
    if interpolation == Inter.BILINEAR:
        return resize_linear(image, height, width)
    if interpolation == Inter.NEAREST:
        return resize_nearest(image, height, width)
    raise not_provided(
        f"Resize of numpy images with {interpolation} (BILINEAR and NEAREST are provided; "
        f"Pillow images take every mode)"
    )


class Resize:
    """``size`` (h, w), or an int for the shorter side (the longer one scaled and truncated)."""

    def __init__(self, size: Any, interpolation: Inter = Inter.BILINEAR):
        self.size, self.interpolation = _size(size, "Resize"), interpolation
        pil_filter(interpolation)

    def __call__(self, image: Any) -> Any:
        h, w = _hw(image)
        if isinstance(self.size, int):
            short = min(h, w)
            h, w = (
                (self.size, int(w * self.size / short))
                if h == short
                else (int(h * self.size / short), self.size)
            )
        else:
            h, w = self.size
        return _resize(image, h, w, self.interpolation)


def _crop(image: Any, top: int, left: int, height: int, width: int) -> Any:
    if isinstance(image, Image.Image):
        return image.crop((left, top, left + width, top + height))
    return image[top : top + height, left : left + width].copy()


class CenterCrop:
    """The centre ``size`` crop: offsets floored for arrays, rounded for Pillow images (MindSpore's)."""

    def __init__(self, size: Any):
        self.size = _size(size, "CenterCrop")

    def __call__(self, image: Any) -> Any:
        th, tw = (self.size, self.size) if isinstance(self.size, int) else self.size
        h, w = _hw(image)
        if th > h or tw > w:
            raise not_provided(f"CenterCrop to {th}x{tw} of a {h}x{w} image (MindSpore pads)")
        if isinstance(image, Image.Image):
            return _crop(image, int(round((h - th) / 2.0)), int(round((w - tw) / 2.0)), th, tw)
        return _crop(image, (h - th) // 2, (w - tw) // 2, th, tw)


class RandomCrop:
    """A random ``size`` crop after optional padding (``padding``, ``pad_if_needed``)."""

    def __init__(
        self,
        size: Any,
        padding: Any = None,
        pad_if_needed: bool = False,
        fill_value: Any = 0,
        padding_mode: Any = "constant",
    ):
        self.size = _size(size, "RandomCrop")
        pad = padding if padding is not None else 0
        pad = [pad] * 4 if isinstance(pad, int) else list(pad) * (4 // len(pad))
        self.padding = pad  # left, top, right, bottom
        self.pad_if_needed, self.fill_value = pad_if_needed, fill_value
        self.mode = getattr(padding_mode, "value", padding_mode)

    def _pad(self, data: np.ndarray) -> np.ndarray:
        left, top, right, bottom = self.padding
        th, tw = (self.size, self.size) if isinstance(self.size, int) else self.size
        if self.pad_if_needed:
            bottom += max(th - (data.shape[0] + top + bottom), 0)
            right += max(tw - (data.shape[1] + left + right), 0)
        widths = [(top, bottom), (left, right)] + [(0, 0)] * (data.ndim - 2)
        if self.mode == "constant":
            return np.pad(data, widths, mode="constant", constant_values=self.fill_value)
        return np.pad(
            data, widths, mode={"edge": "edge", "reflect": "reflect", "symmetric": "symmetric"}[self.mode]
        )

    def __call__(self, image: Any) -> Any:
        pil = isinstance(image, Image.Image)
        data = self._pad(np.asarray(image))
        th, tw = (self.size, self.size) if isinstance(self.size, int) else self.size
        h, w = data.shape[:2]
        if th > h or tw > w:
            raise RuntimeError(f"RandomCrop: crop size {th}x{tw} is larger than the padded image {h}x{w}.")
        rng = generator()
        top, left = int(rng.integers(h - th + 1)), int(rng.integers(w - tw + 1))
        out = data[top : top + th, left : left + tw].copy()
        return Image.fromarray(out) if pil else out


class RandomResizedCrop:
    """A crop of random area ``scale`` and aspect ``ratio``, resized to ``size`` (MindSpore's
    algorithm: ``max_attempts`` draws, then a centre crop clamped to ``ratio``)."""

    def __init__(
        self,
        size: Any,
        scale: Any = (0.08, 1.0),
        ratio: Any = (3.0 / 4.0, 4.0 / 3.0),
        interpolation: Inter = Inter.BILINEAR,
        max_attempts: int = 10,
    ):
        self.size = _size(size, "RandomResizedCrop")
        self.scale, self.ratio = tuple(scale), tuple(ratio)
        self.interpolation, self.max_attempts = interpolation, max_attempts
        pil_filter(interpolation)

    def _window(self, h: int, w: int) -> tuple[int, int, int, int]:
        rng, area = generator(), h * w
        log_ratio = (math.log(self.ratio[0]), math.log(self.ratio[1]))
        for _ in range(self.max_attempts):
            target = area * rng.uniform(*self.scale)
            aspect = math.exp(rng.uniform(*log_ratio))
            cw, ch = int(round(math.sqrt(target * aspect))), int(round(math.sqrt(target / aspect)))
            if 0 < cw <= w and 0 < ch <= h:
                return int(rng.integers(h - ch + 1)), int(rng.integers(w - cw + 1)), ch, cw
        in_ratio = w / h
        if in_ratio < min(self.ratio):
            cw, ch = w, int(round(w / min(self.ratio)))
        elif in_ratio > max(self.ratio):
            ch, cw = h, int(round(h * max(self.ratio)))
        else:
            cw, ch = w, h
        return (h - ch) // 2, (w - cw) // 2, ch, cw

    def __call__(self, image: Any) -> Any:
        top, left, ch, cw = self._window(*_hw(image))
        th, tw = (self.size, self.size) if isinstance(self.size, int) else self.size
        return _resize(_crop(image, top, left, ch, cw), th, tw, self.interpolation)


class _RandomFlip:
    """Flip with probability ``prob``: a PIL image by ``_PIL``, an array along ``_AXIS``."""

    _PIL: Image.Transpose
    _AXIS: int

    def __init__(self, prob: float = 0.5):
        if not 0.0 <= prob <= 1.0:
            raise ValueError(f"Input prob is not within the required interval of [0.0, 1.0], got {prob}.")
        self.prob = prob

    def __call__(self, image: Any) -> Any:
        if generator().random() >= self.prob:
            return image
        if isinstance(image, Image.Image):
            return image.transpose(self._PIL)
        return np.ascontiguousarray(np.flip(image, self._AXIS))


class RandomHorizontalFlip(_RandomFlip):
    """``RandomHorizontalFlip(prob=0.5)``: flip left to right with probability ``prob``."""

    _PIL, _AXIS = Image.FLIP_LEFT_RIGHT, 1


class RandomVerticalFlip(_RandomFlip):
    """``RandomVerticalFlip(prob=0.5)``: flip top to bottom with probability ``prob``."""

    _PIL, _AXIS = Image.FLIP_TOP_BOTTOM, 0
