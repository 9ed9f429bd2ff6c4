"""``mindspore.common.sparse_tensor``: ``RowTensor``, MindSpore's row-sparse tensor.

A ``RowTensor`` holds the rows ``values`` of a dense tensor of shape ``dense_shape`` at the row
positions ``indices`` (the form MindSpore gives embedding gradients on some backends). Here it
is a value container with MindSpore's constructor and properties; ``MultitypeFuncGraph``
registrations for ``"RowTensor"`` match it. The layer's own gradients are always dense, so
its optimizers never receive one.
"""

from __future__ import annotations

from typing import Any

import paddle

__all__ = ["RowTensor"]


class RowTensor:
    """``RowTensor(indices=None, values=None, shape=None, row_tensor=None)``: ``indices`` (1-D
    ints), ``values`` (one row per index), ``shape`` the dense shape; or a copy of ``row_tensor``."""

    def __init__(self, indices: Any = None, values: Any = None, shape: Any = None, row_tensor: Any = None):
        if row_tensor is not None:
            if not isinstance(row_tensor, RowTensor):
                raise TypeError(
                    f"For 'RowTensor', 'row_tensor' must be a RowTensor, but got {type(row_tensor)}."
                )
            indices, values, shape = row_tensor.indices, row_tensor.values, row_tensor.dense_shape
        if not isinstance(indices, paddle.Tensor) or not isinstance(values, paddle.Tensor):
            raise TypeError("For 'RowTensor', 'indices' and 'values' must be Tensors.")
        if not isinstance(shape, tuple | list) or not all(isinstance(d, int) for d in shape):
            raise TypeError(f"For 'RowTensor', 'shape' must be a tuple of ints, but got {shape!r}.")
        if indices.ndim != 1 or values.ndim != len(shape) or values.shape[0] != indices.shape[0]:
            raise ValueError(
                f"For 'RowTensor', 'indices' must be 1-D with one entry per row of 'values', and 'values' "
                f"of rank len(shape): got indices {list(indices.shape)}, values {list(values.shape)}, "
                f"shape {tuple(shape)}."
            )
        self._indices, self._values, self._shape = indices, values, tuple(shape)

    @property
    def indices(self) -> paddle.Tensor:
        return self._indices

    @property
    def values(self) -> paddle.Tensor:
        return self._values

    @property
    def dense_shape(self) -> tuple[int, ...]:
        return self._shape

    def __repr__(self) -> str:
        indices, values = self._indices.numpy(), self._values.numpy()
        return f"RowTensor(indices={indices}, values={values}, shape={self._shape})"
