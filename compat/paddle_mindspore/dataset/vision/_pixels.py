"""Decode, Rescale, Normalize, HWC2CHW and ToTensor (MindSpore's dtypes: float32 after Rescale,
Normalize and ToTensor; uint8 HWC RGB after Decode)."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
from PIL import Image

__all__ = ["Decode", "Rescale", "Normalize", "HWC2CHW", "ToTensor", "as_numpy"]


def as_numpy(image: Any, api: str) -> np.ndarray:
    if isinstance(image, Image.Image):
        return np.asarray(image)
    if isinstance(image, np.ndarray):
        return image
    raise TypeError(f"{api}: Input should be NumPy or PIL image, got {type(image)}.")


class Decode:
    """Encoded image bytes (a uint8 array) to RGB HWC uint8, or a Pillow image (``to_pil``)."""

    def __init__(self, to_pil: bool = False):
        if not isinstance(to_pil, bool):
            raise TypeError(f"Argument to_pil with value {to_pil!r} is not of type [<class 'bool'>].")
        self.to_pil = to_pil

    def __call__(self, data: Any) -> Any:
        raw = data.tobytes() if isinstance(data, np.ndarray) else bytes(data)
        try:
            image = Image.open(io.BytesIO(raw)).convert("RGB")
        except (OSError, ValueError) as e:
            raise RuntimeError(f"Decode: image decode failed: {e}") from e
        return image if self.to_pil else np.asarray(image)


class Rescale:
    """``image * rescale + shift`` as float32."""

    def __init__(self, rescale: float, shift: float):
        self.rescale, self.shift = float(rescale), float(shift)

    def __call__(self, image: Any) -> np.ndarray:
        data = as_numpy(image, "Rescale").astype(np.float32)
        return data * np.float32(self.rescale) + np.float32(self.shift)


class Normalize:
    """``(image - mean) / std`` per channel as float32 (channel last unless ``is_hwc=False``)."""

    def __init__(self, mean: Any, std: Any, is_hwc: bool = True):
        self.mean, self.std = np.asarray(mean, np.float32), np.asarray(std, np.float32)
        if self.mean.shape != self.std.shape or (self.std <= 0).any():
            raise ValueError("Normalize: mean and std must have the same length and std must be positive.")
        self.is_hwc = is_hwc

    def __call__(self, image: Any) -> np.ndarray:
        data = as_numpy(image, "Normalize").astype(np.float32)
        shape = (-1,) if self.is_hwc or data.ndim < 3 else (-1, 1, 1)
        return (data - self.mean.reshape(shape)) / self.std.reshape(shape)


class HWC2CHW:
    def __call__(self, image: Any) -> np.ndarray:
        data = as_numpy(image, "HWC2CHW")
        return np.ascontiguousarray(data.transpose(2, 0, 1)) if data.ndim == 3 else data


class ToTensor:
    """HWC uint8 (or a Pillow image) to CHW float32 in ``[0, 1]``."""

    def __init__(self, output_type: Any = np.float32):
        self.output_type = output_type

    def __call__(self, image: Any) -> np.ndarray:
        data = as_numpy(image, "ToTensor")
        data = data[..., None] if data.ndim == 2 else data
        scaled = data.astype(np.float32) * np.float32(1.0 / 255.0)  # MindSpore multiplies (bit-equal)
        return np.ascontiguousarray(scaled.transpose(2, 0, 1)).astype(self.output_type, copy=False)
