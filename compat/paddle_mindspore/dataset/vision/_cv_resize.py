"""Resizing numpy images as MindSpore does (its C++ op is OpenCV's ``cv::resize``).

NOTE [ Resize arithmetic ]: Pillow's bilinear filter widens its support when it shrinks an
image (antialiasing), so it gives other pixels than MindSpore. MindSpore resizes arrays with
OpenCV: ``INTER_LINEAR`` samples at half-pixel centres, ``sx = (dx + 0.5) * W / w - 0.5``,
clamped to the edges, with weights rounded to 11-bit fixed point (``* 2048``); uint8 rows are
blended horizontally in integers and vertically as OpenCV's vector kernel does,
``((b0 * (r0 >> 4)) >> 16) + ((b1 * (r1 >> 4)) >> 16) + 2) >> 2``. ``INTER_NEAREST`` takes
``floor(dx * W / w)``. Other dtypes blend in float32. Both reproduce MindSpore 2.10's outputs
element for element on the recorded cases (``compat/tests/test_ms_dataset.py``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["resize_linear", "resize_nearest"]


def _taps(dst: int, src: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    f = (np.arange(dst) + 0.5) * (src / dst) - 0.5
    s = np.floor(f).astype(np.int64)
    f = f - s
    low = s < 0
    f, s = np.where(low, 0.0, f), np.where(low, 0, s)
    high = s >= src - 1
    f, s = np.where(high, 0.0, f), np.where(high, src - 1, s)
    return s, np.minimum(s + 1, src - 1), f


def resize_linear(image: np.ndarray, height: int, width: int) -> np.ndarray:
    data = image if image.ndim == 3 else image[..., None]
    x0, x1, fx = _taps(width, data.shape[1])
    y0, y1, fy = _taps(height, data.shape[0])
    if data.dtype == np.uint8:
        a0, a1 = np.round((1 - fx) * 2048).astype(np.int64), np.round(fx * 2048).astype(np.int64)
        b0, b1 = np.round((1 - fy) * 2048).astype(np.int64), np.round(fy * 2048).astype(np.int64)
        wide = data.astype(np.int64)
        rows = wide[:, x0] * a0[None, :, None] + wide[:, x1] * a1[None, :, None]
        top, bottom = (b0[:, None, None] * (rows[y0] >> 4)) >> 16, (b1[:, None, None] * (rows[y1] >> 4)) >> 16
        out = np.clip((top + bottom + 2) >> 2, 0, 255).astype(np.uint8)
    else:
        wide = data.astype(np.float32)
        fx32, fy32 = fx.astype(np.float32)[None, :, None], fy.astype(np.float32)[:, None, None]
        rows = wide[:, x0] * (1 - fx32) + wide[:, x1] * fx32
        out = (rows[y0] * (1 - fy32) + rows[y1] * fy32).astype(data.dtype)
    return out if image.ndim == 3 else out[..., 0]


def resize_nearest(image: np.ndarray, height: int, width: int) -> np.ndarray:
    rows = np.minimum(
        np.floor(np.arange(height) * (image.shape[0] / height)).astype(np.int64), image.shape[0] - 1
    )
    cols = np.minimum(
        np.floor(np.arange(width) * (image.shape[1] / width)).astype(np.int64), image.shape[1] - 1
    )
    return image[rows][:, cols].copy()
