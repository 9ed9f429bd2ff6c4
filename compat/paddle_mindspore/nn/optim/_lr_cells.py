"""The learning rate as MindSpore's ``Optimizer`` holds it in ``optimizer.learning_rate``.

A number (or 0-d Tensor) becomes a float32 Parameter named ``learning_rate``
(``learning_rate_group_<i>`` for a group's own rate); a list or 1-D Tensor becomes
``_IteratorLearningRate``, a schedule that gathers the rate of ``global_step`` from a Parameter of
that name; a ``LearningRateSchedule`` stays itself. With per-group rates, ``learning_rate`` is a
``ParameterTuple`` (one per parameter), or a ``CellList`` when any rate is dynamic, where the
constant ones are wrapped in ``_ConvertToCell`` (recorded from MindSpore 2.10).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import paddle

from ..._tensor import Parameter, ParameterTuple
from .._containers import CellList
from .._learning_rate import LearningRateSchedule

__all__ = ["build_rate", "is_dynamic", "group_rates"]


class _ConvertToCell(LearningRateSchedule):
    """A constant rate as a schedule (``learning_rate`` its Parameter)."""

    def __init__(self, learning_rate: paddle.Tensor):
        super().__init__()
        self.learning_rate = learning_rate

    def construct(self, global_step: paddle.Tensor) -> paddle.Tensor:
        return self.learning_rate + 1.0 - 1.0  # MindSpore's own expression: a new tensor


class _IteratorLearningRate(LearningRateSchedule):
    """Per-step rates: ``construct(global_step)`` gathers the rate at that step."""

    def __init__(self, learning_rate: paddle.Tensor, name: str):
        super().__init__()
        self.learning_rate = Parameter(learning_rate, name)

    def construct(self, global_step: paddle.Tensor) -> paddle.Tensor:
        return paddle.gather(self.learning_rate, global_step.astype("int64").reshape([-1]), axis=0)


def is_dynamic(value: Any) -> bool:
    """Whether MindSpore treats ``value`` as a dynamic rate (a schedule, a list, a 1-D Tensor)."""
    if isinstance(value, int | float):
        return False
    return not (isinstance(value, paddle.Tensor) and value.ndim == 0)


def build_rate(value: Any, name: str, as_cell: bool = False) -> Any:
    """MindSpore's ``_build_single_lr``: the Parameter, iterator or schedule for one rate."""
    if isinstance(value, LearningRateSchedule):
        return value
    if isinstance(value, paddle.Tensor):
        array = value.numpy().astype(np.float32)
    else:
        array = np.asarray(value if isinstance(value, int | float) else list(value), np.float32)
    if array.ndim == 1:
        return _IteratorLearningRate(paddle.to_tensor(array), name)
    rate = Parameter(paddle.to_tensor(array), name)
    return _ConvertToCell(rate) if as_cell else rate


def group_rates(per_param: list[Any], dynamic: bool) -> Any:
    """``learning_rate`` with per-group rates: a CellList when dynamic, else a ParameterTuple."""
    return CellList(per_param) if dynamic else ParameterTuple(per_param)
