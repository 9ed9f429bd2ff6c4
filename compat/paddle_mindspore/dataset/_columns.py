"""Rows are tuples of numpy arrays; values from Python take MindSpore's dtypes here."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["as_array", "as_row", "to_output"]


def as_array(value: Any) -> np.ndarray:
    """A column value as MindSpore stores it: Python ``int`` int64, ``float`` float64, arrays kept."""
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "numpy") and not isinstance(value, np.generic):
        return np.asarray(value.numpy())  # a tensor returned by a Python function
    return np.asarray(value)


def as_row(values: Any, width: int, where: str) -> tuple:
    """A tuple of ``width`` arrays from what a source or a map function returned."""
    items = values if isinstance(values, tuple) else (values,)
    if width == 1 and not isinstance(values, tuple):
        items = (values,)
    if len(items) != width:
        raise RuntimeError(
            f"{where}: got {len(items)} values for {width} column(s); the number of values "
            f"must equal the number of column names."
        )
    return tuple(as_array(v) for v in items)


_TENSOR_DTYPE = {np.dtype(np.uint16): np.int32, np.dtype(np.uint32): np.int64, np.dtype(np.uint64): np.int64}


def to_output(array: np.ndarray, output_numpy: bool) -> Any:
    """What an iterator yields: the array, or a Tensor (unsigned types Paddle lacks widened)."""
    if output_numpy:
        return array
    import paddle

    if array.dtype.kind in "US":
        return array  # strings stay numpy, as MindSpore yields them
    return paddle.to_tensor(array.astype(_TENSOR_DTYPE.get(array.dtype, array.dtype), copy=False))
