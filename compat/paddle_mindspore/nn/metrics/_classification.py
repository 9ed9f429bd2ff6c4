"""``Accuracy``, ``Precision`` and ``Recall`` (classification: argmax of the logits; multilabel:
0/1 predictions), per MindSpore 2.10's formulas."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ._base import Metric, class_labels

__all__ = ["Accuracy", "Precision", "Recall"]


class _Counted(Metric):
    def _pair(self, inputs: tuple) -> tuple[np.ndarray, np.ndarray]:
        name = type(self).__name__
        if len(inputs) != 2:
            raise ValueError(
                f"For '{name}.update', it needs 2 inputs (predicted value, true value), but got {len(inputs)}"
            )
        y_pred, y = self._convert_data(inputs[0]), self._convert_data(inputs[1])
        if self._type == "classification":
            y = class_labels(y_pred, y)
        if self._class_num == 0:
            self._class_num = y_pred.shape[1]
        elif y_pred.shape[1] != self._class_num:
            raise ValueError(
                f"For '{name}.update', class number not match, last input predicted data contain "
                f"{self._class_num} classes, but current predicted data contain {y_pred.shape[1]} "
                f"classes, please check your predicted value(inputs[0])."
            )
        return y_pred, y

    def _one_hot(self, y_pred: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = self._class_num
        if self._type == "multilabel":
            # MindSpore 2.10 sums these (C, N) arrays over axis 0: one rate per sample (recorded)
            return y_pred.swapaxes(1, 0).reshape(n, -1), y.swapaxes(1, 0).reshape(n, -1)
        if y.max() + 1 > n:
            raise ValueError(
                f"For '{type(self).__name__}.update', predicted value (input[0]) should have the same "
                f"classes number as true value (input[1]), but got predicted value classes {n}, "
                f"true value classes {y.max() + 1}."
            )
        return np.eye(n)[y_pred.argmax(axis=1).reshape(-1)], np.eye(n)[y.reshape(-1)]


class Accuracy(_Counted):
    def __init__(self, eval_type: str = "classification"):
        super().__init__(eval_type)
        self.clear()

    def clear(self) -> None:
        self._correct_num, self._total_num, self._class_num = 0, 0, 0

    def update(self, *inputs: Any) -> None:
        y_pred, y = self._pair(inputs)
        if self._type == "classification":
            result = (np.equal(y_pred.argmax(axis=1), y) * 1).reshape(-1)
        else:
            flat = y_pred.swapaxes(1, y_pred.ndim - 1).reshape(-1, self._class_num)
            result = np.equal(flat, y.swapaxes(1, y.ndim - 1).reshape(-1, self._class_num)).all(axis=1) * 1
        self._correct_num += result.sum()
        self._total_num += result.shape[0]

    def eval(self) -> np.float64:
        if self._total_num == 0:
            raise RuntimeError(
                "The 'Accuracy' can not be calculated, because the number of samples is 0, please "
                "check whether your inputs(predicted value, true value) are empty, or has called "
                "update method before calling eval method."
            )
        return self._correct_num / self._total_num


class _Rates(_Counted):
    eps = sys.float_info.min

    def __init__(self, eval_type: str = "classification"):
        super().__init__(eval_type)
        self.clear()

    def clear(self) -> None:
        self._class_num, self._true_positives, self._counted = 0, 0, 0
        self._tp_average, self._count_average = 0, 0
        self._tp_list, self._count_list = np.empty(0), np.empty(0)

    def _counts(self, y_pred: np.ndarray, y: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def update(self, *inputs: Any) -> None:
        y_pred, y = self._one_hot(*self._pair(inputs))
        true_positives, counted = (y * y_pred).sum(axis=0), self._counts(y_pred, y)
        if self._type == "multilabel":
            self._tp_average += np.sum(true_positives / (counted + self.eps))
            self._count_average += len(counted)
            self._tp_list = np.concatenate((self._tp_list, true_positives))
            self._count_list = np.concatenate((self._count_list, counted))
        else:
            self._true_positives += true_positives
            self._counted += counted

    def eval(self, average: bool = False) -> Any:
        if self._class_num == 0:
            raise RuntimeError(
                f"The '{type(self).__name__}' can not be calculated, because the number of samples "
                f"is 0, please check whether your inputs (predicted value, true value) are empty, "
                f"or has called update method before calling eval method."
            )
        if not isinstance(average, bool):
            raise TypeError(f"For '{type(self).__name__}', the type of 'average' should be bool.")
        if self._type == "multilabel":
            result = self._tp_list / (self._count_list + self.eps)
            return self._tp_average / self._count_average if average else result
        result = self._true_positives / (self._counted + self.eps)
        return result.mean() if average else result


class Precision(_Rates):
    """Per class: true positives over predicted positives (``average=True``: their mean)."""

    def _counts(self, y_pred: np.ndarray, y: np.ndarray) -> np.ndarray:
        return y_pred.sum(axis=0)


class Recall(_Rates):
    """Per class: true positives over actual positives (``average=True``: their mean)."""

    def _counts(self, y_pred: np.ndarray, y: np.ndarray) -> np.ndarray:
        return y.sum(axis=0)
