"""``mindspore.nn.metrics``: MindSpore's older home of the metrics, the same classes as
``mindspore.train.metrics`` (mindcv's validate.py builds ``nn.metrics.Loss()``)."""

from .._validate import missing as _missing
from ..train.metrics import (
    Accuracy,
    Loss,
    Metric,
    Precision,
    Recall,
    Top1CategoricalAccuracy,
    Top5CategoricalAccuracy,
    TopKCategoricalAccuracy,
)

__all__ = ["Metric", "Accuracy", "Loss", "Precision", "Recall", "TopKCategoricalAccuracy",
           "Top1CategoricalAccuracy", "Top5CategoricalAccuracy"]


def __getattr__(name: str):
    raise _missing("mindspore.nn.metrics", name)
