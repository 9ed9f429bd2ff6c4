"""``GaussianBlur``: OpenCV's bit-exact fixed-point Gaussian filter for 8-bit images, in numpy.

NOTE [ Blur arithmetic ]: MindSpore 2.10 blurs numpy images with OpenCV's ``GaussianBlur``
(border ``REFLECT_101``). For 8-bit images OpenCV's kernel is ``exp(-x^2 / (2 sigma^2))``
normalised in double precision, then quantised to 1/256 with error diffusion from the ends
inwards (the centre takes what makes the sum exactly 256); rows then columns are summed in
integers and the result rounded half up, ``(sum + 2^15) >> 16``. Bit-exact against the
recording (kernel 3 x 3 and 5 x 3, two sigmas).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._enhance import pixel_op

__all__ = ["GaussianBlur"]


def _kernel(size: int, sigma: float) -> np.ndarray:
    """OpenCV's ``getGaussianKernelBitExact`` then its fixed-point quantisation (8 fraction bits)."""
    half = size // 2
    scale = -0.5 / (sigma * sigma)
    tails = [math.exp((i - half) ** 2 * scale) for i in range(half)]
    inverse = 1.0 / (2 * sum(tails) + 1.0)
    fixed, error = np.zeros(size, np.int64), 0.0
    for i, value in enumerate(tails):
        adjusted = value * inverse * 256 + error
        fixed[i] = fixed[size - 1 - i] = int(np.rint(adjusted))
        error = adjusted - fixed[i]
    fixed[half] = 256 - 2 * int(fixed[:half].sum())
    return fixed


def _pair(value: Any, name: str, check: Any) -> tuple:
    items = (value, value) if isinstance(value, int | float) and not isinstance(value, bool) else tuple(value)
    if len(items) != 2 or not all(check(v) for v in items):
        raise ValueError(f"GaussianBlur: {name} should be a number or a sequence of two, each valid, got "
                         f"{value!r}.")
    return items


class GaussianBlur:
    """``GaussianBlur(kernel_size, sigma=None)``: ``kernel_size`` odd positive ``(width, height)``
    (or one int), ``sigma`` positive ``(x, y)`` (or one number; None: ``0.3 * ((k - 1) * 0.5 - 1)
    + 0.8`` per side, MindSpore's default)."""

    def __init__(self, kernel_size: Any, sigma: Any = None):
        self.kernel_size = _pair(kernel_size, "kernel_size",
                                 lambda k: isinstance(k, int) and not isinstance(k, bool) and k > 0 and k % 2)
        if sigma is None:
            sigma = tuple(0.3 * ((k - 1) * 0.5 - 1) + 0.8 for k in self.kernel_size)
        self.sigma = _pair(sigma, "sigma", lambda s: isinstance(s, int | float) and s > 0)

    def __call__(self, image: Any) -> Any:
        return pixel_op(image, "GaussianBlur", self._blurred)

    def _blurred(self, image: np.ndarray) -> np.ndarray:
        (kx, ky), (sx, sy) = self.kernel_size, self.sigma
        wx, wy = _kernel(kx, float(sx)), _kernel(ky, float(sy))
        h, w = image.shape[:2]
        margins = ((ky // 2, ky // 2), (kx // 2, kx // 2), (0, 0))
        padded = np.pad(image.astype(np.int64), margins, mode="reflect")  # OpenCV's REFLECT_101
        rows = sum(wx[i] * padded[:, i:i + w] for i in range(kx))
        out = sum(wy[j] * rows[j:j + h] for j in range(ky))
        return ((out + (1 << 15)) >> 16).astype(np.uint8)
