"""``TypeCast``, ``OneHot`` (the label's dtype kept, as MindSpore), ``Compose`` and ``Duplicate``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._dtype import to_numpy_dtype

__all__ = ["TypeCast", "OneHot", "Compose", "Duplicate"]


class TypeCast:
    def __init__(self, data_type: Any):
        self.dtype = to_numpy_dtype(data_type)

    def __call__(self, data: Any) -> np.ndarray:
        return np.asarray(data).astype(self.dtype)


class OneHot:
    def __init__(self, num_classes: int, smoothing_rate: float = 0.0):
        if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes <= 0:
            raise ValueError(
                f"Input num_classes is not within the required interval of [1, 2147483647], "
                f"got {num_classes!r}."
            )
        if not 0.0 <= smoothing_rate <= 1.0:
            raise ValueError("Input smoothing_rate is not within the required interval of [0.0, 1.0].")
        self.num_classes, self.smoothing_rate = num_classes, smoothing_rate

    def __call__(self, label: Any) -> np.ndarray:
        data = np.asarray(label)
        if data.dtype.kind not in "iu":
            raise RuntimeError(f"OneHot: the input must be of integer type, but got {data.dtype}.")
        out = (data[..., None] == np.arange(self.num_classes)).astype(data.dtype)
        if self.smoothing_rate:
            out = (out * (1 - self.smoothing_rate) + self.smoothing_rate / self.num_classes).astype(
                np.float32
            )
        return out


class Compose:
    """Apply ``transforms`` in order (each one's outputs are the next one's inputs)."""

    def __init__(self, transforms: Any):
        items = list(transforms) if isinstance(transforms, list | tuple) else None
        if not items or not all(callable(t) for t in items):
            raise TypeError(f"transforms should be a non-empty list of callables, but got {transforms!r}.")
        self.transforms = items

    def __call__(self, *data: Any) -> Any:
        for transform in self.transforms:
            result = transform(*data)
            data = result if isinstance(result, tuple) else (result,)
        return data if len(data) > 1 else data[0]


class Duplicate:
    """The input and a copy of it (two output columns)."""

    def __call__(self, data: Any) -> tuple[np.ndarray, np.ndarray]:
        array = np.asarray(data)
        return array, array.copy()
