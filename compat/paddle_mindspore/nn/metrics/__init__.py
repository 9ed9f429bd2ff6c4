"""``mindspore.nn.metrics``: ``Accuracy``, ``Loss``, ``Top1``/``Top5``/``TopKCategoricalAccuracy``,
``Precision``, ``Recall`` (MindSpore's formulas, on numpy).

MindSpore's older home of the metrics (mindcv's validate.py builds ``nn.metrics.Loss()``);
``mindspore.train.metrics`` gives the same classes.  They are defined here, below ``train``,
because ``train`` builds on ``nn`` (``Model`` wraps cells) and the layer imports only downward.
"""

from ..._validate import missing as _missing
from ._base import Metric
from ._classification import Accuracy, Precision, Recall
from ._simple import Loss, Top1CategoricalAccuracy, Top5CategoricalAccuracy, TopKCategoricalAccuracy

__all__ = ["Metric", "Accuracy", "Loss", "Precision", "Recall", "TopKCategoricalAccuracy",
           "Top1CategoricalAccuracy", "Top5CategoricalAccuracy"]


def __getattr__(name: str):
    raise _missing("mindspore.nn.metrics", name)
