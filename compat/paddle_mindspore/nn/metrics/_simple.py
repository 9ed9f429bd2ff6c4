"""``Loss`` (mean of the per-batch mean losses) and top-k categorical accuracy."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Metric, class_labels

__all__ = ["Loss", "TopKCategoricalAccuracy", "Top1CategoricalAccuracy", "Top5CategoricalAccuracy"]


class Loss(Metric):
    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self) -> None:
        self._sum_loss, self._total_num = 0, 0

    def update(self, *inputs: Any) -> None:
        if len(inputs) != 1:
            raise ValueError(f"For 'Loss.update', it needs 1 input (loss), but got {len(inputs)}")
        loss = self._convert_data(inputs[0])
        loss = loss.reshape(1) if loss.ndim == 0 else loss
        if loss.ndim != 1:
            raise ValueError(
                f"For 'Loss.update', the dimension of your input (loss) must be 1, but got {loss.ndim}."
            )
        self._sum_loss += loss.mean(-1)
        self._total_num += 1

    def eval(self) -> Any:
        if self._total_num == 0:
            raise RuntimeError(
                "The 'Loss' can not be calculated, because the number of samples is 0, please check "
                "whether has called update method before calling eval method."
            )
        return self._sum_loss / self._total_num


class TopKCategoricalAccuracy(Metric):
    def __init__(self, k: int):
        super().__init__()
        if isinstance(k, bool) or not isinstance(k, int):
            raise TypeError(
                f"For 'TopKCategoricalAccuracy', the type of 'k' should be int, but got {type(k)}."
            )
        if k < 1:
            raise ValueError(
                f"For 'TopKCategoricalAccuracy', the argument 'k' must be greater than or equal to 1, "
                f"but got {k}."
            )
        self.k = k
        self.clear()

    def clear(self) -> None:
        self._correct_num, self._samples_num = 0, 0

    def update(self, *inputs: Any) -> None:
        if len(inputs) != 2:
            raise ValueError(
                f"For 'TopKCategoricalAccuracy.update', it needs 2 inputs (predicted value, true "
                f"value), but got 'inputs' size: {len(inputs)}."
            )
        y_pred, y = self._convert_data(inputs[0]), self._convert_data(inputs[1])
        y = class_labels(y_pred, y)
        indices = np.argsort(-y_pred, axis=1)[:, : self.k]
        repeated = y.reshape(-1, 1).repeat(self.k, axis=1)
        self._correct_num += np.equal(indices, repeated).sum(axis=1).sum()
        self._samples_num += repeated.shape[0]

    def eval(self) -> Any:
        if self._samples_num == 0:
            raise RuntimeError(
                "The 'TopKCategoricalAccuracy' can not be calculated, because the number of samples "
                "is 0, please check whether your inputs (predicted value, true value) are empty, or "
                "has called update method before calling eval method."
            )
        return self._correct_num / self._samples_num


class Top1CategoricalAccuracy(TopKCategoricalAccuracy):
    def __init__(self):
        super().__init__(1)


class Top5CategoricalAccuracy(TopKCategoricalAccuracy):
    def __init__(self):
        super().__init__(5)
