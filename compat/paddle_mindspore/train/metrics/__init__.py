"""``mindspore.train.metrics``: ``Accuracy``, ``Loss``, ``Top1``/``Top5``/``TopKCategoricalAccuracy``,
``Precision``, ``Recall`` (MindSpore's formulas, on numpy): the classes of ``nn.metrics``, where
they are defined (``train`` builds on ``nn``)."""

from ..._unprovided import unprovided_function as _unprovided_function
from ..._validate import missing as _missing
from ...nn.metrics import (
    Accuracy,
    Loss,
    Metric,
    Precision,
    Recall,
    Top1CategoricalAccuracy,
    Top5CategoricalAccuracy,
    TopKCategoricalAccuracy,
)

__all__ = [
    "get_metrics",  # raise MissingAPIError when used
    "Metric",
    "Accuracy",
    "Loss",
    "Precision",
    "Recall",
    "TopKCategoricalAccuracy",
    "Top1CategoricalAccuracy",
    "Top5CategoricalAccuracy",
]


# Raise MissingAPIError when used (see _unprovided.py).
get_metrics = _unprovided_function("mindspore.train.metrics.get_metrics")


def __getattr__(name: str):
    raise _missing("mindspore.train.metrics", name)
