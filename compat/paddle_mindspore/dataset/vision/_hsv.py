"""The hue shift of ``RandomColorAdjust(hue=...)``, with MindSpore's arithmetic.

NOTE [ Hue arithmetic ]: MindSpore 2.10 converts the uint8 RGB image with OpenCV's
``RGB2HSV_FULL`` (hue in 0..255), adds ``uint8(hue * 255)`` to the hue channel with uint8
wrap-around, and converts back with ``HSV2RGB_FULL``. Both conversions are reproduced here:
forward in OpenCV's fixed point (12-bit reciprocal tables, rounded; hue range 256), back in
float32 as OpenCV computes it (sector and fraction of ``h * 6/255``: OpenCV's ``_FULL`` inverse
takes a hue range of 255, not 256; ``v * (1 - s * f)``, times 255, rounded half to even). A hue
of 0 thus still changes some pixels, as in MindSpore. Bit-exact against recordings at hue
-0.1, 0, 0.002, 0.004, 0.1, 0.25, 0.5 (compat/tests/test_ms_training_cases.py).
"""

from __future__ import annotations

import numpy as np

__all__ = ["shift_hue"]

_SHIFT = 12
_HALF = 1 << (_SHIFT - 1)


def _table(numerator: int, scale: float) -> np.ndarray:
    """OpenCV's ``saturate_cast<int>((numerator << 12) / (scale * i))``, 0 at ``i = 0``."""
    index = np.arange(256, dtype=np.float64)
    with np.errstate(divide="ignore"):
        values = np.where(index > 0, (numerator << _SHIFT) / (scale * np.maximum(index, 1)), 0)
    return np.rint(values).astype(np.int64)


_SDIV, _HDIV = _table(255, 1.0), _table(256, 6.0)


def _to_hsv(rgb: np.ndarray) -> np.ndarray:
    r, g, b = (rgb[..., i].astype(np.int64) for i in range(3))
    v = np.maximum(np.maximum(b, g), r)
    diff = v - np.minimum(np.minimum(b, g), r)
    s = (diff * _SDIV[v] + _HALF) >> _SHIFT
    h = np.where(v == r, g - b, np.where(v == g, b - r + 2 * diff, r - g + 4 * diff))
    h = (h * _HDIV[diff] + _HALF) >> _SHIFT
    h = np.where(h < 0, h + 256, h)
    return np.stack([np.clip(h, 0, 255), s, v], axis=-1)


# which of (v, p, q, t)-style entries each sector takes for (b, g, r), as OpenCV lists them
_SECTORS = np.array([[1, 3, 0], [1, 0, 2], [3, 0, 1], [0, 2, 1], [0, 1, 3], [2, 1, 0]])


def _to_rgb(hsv: np.ndarray) -> np.ndarray:
    f32 = np.float32
    h = hsv[..., 0].astype(f32) * f32(6.0 / 255.0)  # OpenCV: hue range 256 forward, 255 back
    s = hsv[..., 1].astype(f32) * f32(1.0 / 255.0)
    v = hsv[..., 2].astype(f32) * f32(1.0 / 255.0)
    sector = np.floor(h).astype(np.int64)
    frac = h - sector.astype(f32)
    bad = (sector < 0) | (sector >= 6)
    sector, frac = np.where(bad, 0, sector), np.where(bad, f32(0), frac)
    one = f32(1.0)
    tab = np.stack([v, v * (one - s), v * (one - s * frac), v * (one - s * (one - frac))], axis=-1)
    picks = _SECTORS[sector]
    bgr = np.take_along_axis(tab, picks, axis=-1)
    bgr = np.where((s == 0)[..., None], v[..., None], bgr)
    out = np.clip(np.rint(bgr * f32(255.0)), 0, 255).astype(np.uint8)
    return out[..., ::-1]


def shift_hue(image: np.ndarray, hue: float) -> np.ndarray:
    """``image`` (uint8 HWC RGB) with its hue turned by ``hue`` (in ``[-0.5, 0.5]``) of a circle."""
    if image.shape[2] != 3:
        return image
    hsv = _to_hsv(image)
    step = int(np.float32(hue) * np.float32(255.0))  # C++'s cast: truncation toward zero
    hsv[..., 0] = (hsv[..., 0] + step) % 256
    return _to_rgb(hsv)
