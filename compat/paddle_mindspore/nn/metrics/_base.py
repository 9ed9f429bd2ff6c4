"""``Metric``: the base of metrics (``clear``, ``update``, ``eval``, ``set_indexes``)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["Metric", "as_numpy", "class_labels"]


def as_numpy(data: Any, api: str) -> np.ndarray:
    """A Tensor, list or array as numpy (MindSpore's ``Metric._convert_data``)."""
    if hasattr(data, "numpy") and not isinstance(data, np.ndarray):
        return np.asarray(data.numpy())
    if isinstance(data, np.ndarray | list | tuple | int | float | np.generic):
        return np.asarray(data)
    raise TypeError(
        f"For '{api}', the input data type must be Tensor, list or numpy.ndarray, but got {type(data)}."
    )


def class_labels(y_pred: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Integer labels from ``y`` (one-hot rows are turned into their index, as MindSpore does)."""
    if (
        y_pred.ndim == y.ndim
        and y.ndim > 1
        and set(np.unique(y).tolist()) <= {0, 1}
        and (y.sum(axis=-1) == 1).all()
    ):
        return y.argmax(axis=1)
    return y


class Metric:
    """Subclasses define ``clear``, ``update(*inputs)`` and ``eval``. ``set_indexes`` picks which
    outputs of the evaluation network (``loss, logits, label``) ``update`` receives."""

    def __init__(self, eval_type: str = "classification"):
        if eval_type not in ("classification", "multilabel"):
            raise ValueError(f"Type must be in ['classification', 'multilabel'], but got {eval_type}")
        self._type = eval_type
        self._indexes: list[int] | None = None

    @property
    def indexes(self) -> list[int] | None:
        return self._indexes

    def set_indexes(self, indexes: list[int]) -> Metric:
        if not isinstance(indexes, list) or not all(isinstance(i, int) for i in indexes):
            raise ValueError(
                f"For 'set_indexes', the argument 'indexes' should be a list of int, got {indexes}."
            )
        self._indexes = indexes
        return self

    def clear(self) -> None:
        raise NotImplementedError

    def update(self, *inputs: Any) -> None:
        raise NotImplementedError

    def eval(self) -> Any:
        raise NotImplementedError

    def _convert_data(self, data: Any) -> np.ndarray:
        return as_numpy(data, type(self).__name__)
