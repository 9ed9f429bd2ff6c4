"""``RandomErasing`` (on CHW arrays, after ``HWC2CHW``) and ``RandomCropDecodeResize``.

Random choices come from the pipeline's generator (``dataset.config``), so which rectangle is
erased differs from MindSpore's; the algorithm is MindSpore's (and torchvision's): up to
``max_attempts`` draws of an area fraction from ``scale`` and a log-uniform aspect from
``ratio``, the first rectangle that fits is filled with ``value`` (per channel, or normal
noise with ``value='random'``); nothing is erased when none fits.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..config import generator
from ._geometry import RandomResizedCrop
from ._pixels import Decode
from ._types import Inter

__all__ = ["RandomErasing", "RandomCropDecodeResize"]


def _interval(value: Any, name: str) -> tuple[float, float]:
    if not (isinstance(value, list | tuple) and len(value) == 2 and 0 <= value[0] <= value[1]):
        raise ValueError(f"RandomErasing: {name} should be a (min, max) sequence with 0 <= min <= max, "
                         f"got {value!r}.")
    return float(value[0]), float(value[1])


class RandomErasing:
    """``RandomErasing(prob=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False,
    max_attempts=10)`` on a CHW array."""

    def __init__(self, prob: float = 0.5, scale: Any = (0.02, 0.33), ratio: Any = (0.3, 3.3), value: Any = 0,
                 inplace: bool = False, max_attempts: int = 10):
        if not 0.0 <= prob <= 1.0:
            raise ValueError(f"Input prob is not within the required interval of [0.0, 1.0], got {prob}.")
        self.prob, self.scale, self.ratio = prob, _interval(scale, "scale"), _interval(ratio, "ratio")
        if self.ratio[0] <= 0:
            raise ValueError(f"RandomErasing: ratio should be positive, got {ratio!r}.")
        self.value, self.inplace, self.max_attempts = value, inplace, int(max_attempts)

    def __call__(self, image: Any) -> np.ndarray:
        data = np.asarray(image)
        if data.ndim != 3:
            raise ValueError(f"RandomErasing: the input should be a CHW array, got shape {data.shape}.")
        rng = generator()
        if rng.random() >= self.prob:
            return data
        box = self._box(rng, *data.shape)
        if box is None:
            return data
        top, left, h, w = box
        out = data if self.inplace else data.copy()
        out[:, top:top + h, left:left + w] = self._fill(rng, data.shape[0], h, w, data.dtype)
        return out

    def _box(self, rng: np.random.Generator, channels: int, height: int, width: int) -> tuple | None:
        log_ratio = (math.log(self.ratio[0]), math.log(self.ratio[1]))
        for _ in range(self.max_attempts):
            area = height * width * rng.uniform(*self.scale)
            aspect = math.exp(rng.uniform(*log_ratio))
            h, w = int(round(math.sqrt(area * aspect))), int(round(math.sqrt(area / aspect)))
            if 0 < h < height and 0 < w < width:
                return int(rng.integers(height - h + 1)), int(rng.integers(width - w + 1)), h, w
        return None

    def _fill(self, rng: np.random.Generator, channels: int, h: int, w: int, dtype: Any) -> np.ndarray:
        if self.value == "random":
            return rng.standard_normal((channels, h, w)).astype(dtype)
        values = np.broadcast_to(np.asarray(self.value, dtype).reshape(-1, 1, 1), (channels, 1, 1))
        return np.broadcast_to(values, (channels, h, w))


class RandomCropDecodeResize(RandomResizedCrop):
    """``RandomCropDecodeResize(size, scale=(0.08, 1.0), ratio=(3/4, 4/3), interpolation=BILINEAR,
    max_attempts=10)``: ``Decode`` then ``RandomResizedCrop`` with these arguments."""

    def __init__(self, size: Any, scale: Any = (0.08, 1.0), ratio: Any = (3.0 / 4.0, 4.0 / 3.0),
                 interpolation: Inter = Inter.BILINEAR, max_attempts: int = 10):
        super().__init__(size, scale, ratio, interpolation, max_attempts)

    def __call__(self, data: Any) -> Any:
        return super().__call__(Decode()(data))
