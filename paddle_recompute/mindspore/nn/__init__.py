"""``mindspore.nn``: Cell, the layers and containers the ported programs use, loss and optimizers."""

from .._cell import Cell
from .._validate import missing as _missing
from ._basic import Dense, Dropout, Flatten, ReLU
from ._containers import CellList, SequentialCell
from ._conv import AvgPool2d, BatchNorm2d, Conv2d, MaxPool2d
from ._train import SGD, Momentum, SoftmaxCrossEntropyWithLogits

__all__ = [
    "Cell", "Dense", "Dropout", "Flatten", "ReLU", "CellList", "SequentialCell", "AvgPool2d",
    "BatchNorm2d", "Conv2d", "MaxPool2d", "SGD", "Momentum", "SoftmaxCrossEntropyWithLogits",
]


def __getattr__(name: str):
    raise _missing("mindspore.nn", name)
