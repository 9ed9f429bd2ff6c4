"""OpenCV's ``warpAffine`` fixed-point arithmetic for 8-bit images, in numpy.

NOTE [ Warp arithmetic ]: MindSpore 2.10 warps numpy images with OpenCV. For an inverse matrix
``m`` (output pixel -> input position, integer pixel coordinates) OpenCV quantises positions to
1/32 pixel (``AB_BITS = 10``: ``round(m * 1024)`` per row and column, ``>> 5``), takes the
interpolation weights from a table of 32 x 32 fractional offsets rounded to 1/32768 (the
central 2 x 2 weights corrected so that each row sums to 32768), and rounds
``(sum(pixel * weight) + 2^14) >> 15``. Taps outside the image read the fill value. Linear uses
2 x 2 taps ``(1 - t, t)``; cubic 4 x 4 taps of the cubic kernel with ``A = -0.75``.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["warp_affine"]

_BITS, _SIZE, _SCALE = 5, 32, 32768


def _linear(t: np.float32) -> list[np.float32]:
    return [np.float32(1) - t, t]


def _cubic(t: np.float32) -> list[np.float32]:
    a = np.float32(-0.75)
    x = np.float32(t)
    c0 = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a
    c1 = ((a + 2) * x - (a + 3)) * x * x + 1
    c2 = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1
    return [np.float32(c0), np.float32(c1), np.float32(c2), np.float32(1) - c0 - c1 - c2]


@lru_cache(maxsize=2)
def _table(taps: int) -> np.ndarray:
    """``table[fy, fx]``: the ``taps x taps`` integer weights (OpenCV's ``initInterTab2D``)."""
    kernel = _linear if taps == 2 else _cubic
    table = np.zeros((_SIZE, _SIZE, taps, taps), np.int64)
    centre = slice(2, 4) if taps == 4 else slice(0, 2)  # OpenCV's correction block (k = ksize/2 ...)
    for i in range(_SIZE):
        vy = kernel(np.float32(i) * np.float32(1.0 / _SIZE))
        for j in range(_SIZE):
            vx = kernel(np.float32(j) * np.float32(1.0 / _SIZE))
            weights = np.array([[np.rint(np.float32(y * x) * _SCALE) for x in vx] for y in vy], np.int64)
            diff = int(weights.sum()) - _SCALE
            if diff:
                block = weights[centre, centre]
                k = np.unravel_index(np.argmax(block) if diff < 0 else np.argmin(block), block.shape)
                block[k] -= diff
            table[i, j] = weights
    return table


def warp_affine(image: np.ndarray, m: list[float], taps: int, fill: tuple,
                size: tuple[int, int] | None = None) -> np.ndarray:
    """``image`` (uint8 H x W x C) warped by the inverse matrix ``m`` with 2 (linear) or 4 (cubic)
    taps into ``size`` (width, height; default the input's); positions outside read ``fill``
    (one value per channel)."""
    h, w, c = image.shape
    ab = 1 << 10
    out_w, out_h = size or (w, h)
    xs, ys = np.arange(out_w), np.arange(out_h)
    half = 1 << (10 - _BITS - 1)
    ax = np.array([int(np.rint(m[0] * x * ab)) for x in xs])
    bx = np.array([int(np.rint(m[3] * x * ab)) for x in xs])
    x0 = np.array([int(np.rint((m[1] * y + m[2]) * ab)) for y in ys]) + half
    y0 = np.array([int(np.rint((m[4] * y + m[5]) * ab)) for y in ys]) + half
    px = (x0[:, None] + ax[None, :]) >> (10 - _BITS)
    py = (y0[:, None] + bx[None, :]) >> (10 - _BITS)
    ix, fx = px >> _BITS, px & (_SIZE - 1)
    iy, fy = py >> _BITS, py & (_SIZE - 1)
    padded = np.empty((h + 2 * taps + 2, w + 2 * taps + 2, c), np.int64)
    padded[...] = np.asarray(fill, np.int64).reshape(1, 1, -1)
    off = taps + 1
    padded[off:off + h, off:off + w] = image
    weights = _table(taps)[fy, fx]  # h, w, taps, taps
    start = 1 - taps // 2
    acc = np.zeros((out_h, out_w, c), np.int64)
    for dy in range(taps):
        for dx in range(taps):
            yy = np.clip(iy + start + dy + off, 0, padded.shape[0] - 1)
            xx = np.clip(ix + start + dx + off, 0, padded.shape[1] - 1)
            acc += padded[yy, xx] * weights[..., dy, dx, None]
    return np.clip((acc + (1 << 14)) >> 15, 0, 255).astype(np.uint8)
