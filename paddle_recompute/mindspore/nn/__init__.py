"""``mindspore.nn``: Cell, layers, containers, losses, optimizers and training wrappers."""

from .._cell import Cell
from .._validate import missing as _missing
from ._activation import GELU, LayerNorm, SiLU, Softmax
from ._basic import Dense, Dropout, Flatten, ReLU
from ._containers import CellDict, CellList, SequentialCell
from ._conv import AvgPool2d, Conv1d, Conv2d, MaxPool2d
from ._embedding import Embedding
from ._loss import CrossEntropyLoss, L1Loss, MSELoss, SoftmaxCrossEntropyWithLogits
from ._norm import BatchNorm1d, BatchNorm2d
from ._optim import SGD, Adam, AdamWeightDecay, Momentum, Optimizer
from ._wrap import TrainOneStepCell, WithLossCell

__all__ = [
    "Cell", "Dense", "Dropout", "Flatten", "ReLU", "GELU", "SiLU", "Softmax", "LayerNorm", "Embedding",
    "CellList", "SequentialCell", "CellDict", "AvgPool2d", "Conv1d", "Conv2d", "MaxPool2d", "BatchNorm1d",
    "BatchNorm2d", "MSELoss", "L1Loss", "CrossEntropyLoss", "SoftmaxCrossEntropyWithLogits", "Optimizer",
    "SGD",
    "Momentum", "Adam", "AdamWeightDecay", "WithLossCell", "TrainOneStepCell",
]


def __getattr__(name: str):
    raise _missing("mindspore.nn", name)
