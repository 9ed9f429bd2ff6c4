"""``mindspore.nn.optim``: the optimizers (also re-exported by ``mindspore.nn``)."""

from ..._validate import missing as _missing
from . import optimizer
from ._adaptive import Adagrad, Lamb, RMSProp
from ._rules import SGD, Adam, AdamWeightDecay, Momentum
from .optimizer import Optimizer

__all__ = ["optimizer", "Optimizer", "SGD", "Momentum", "Adam", "AdamWeightDecay", "Adagrad", "RMSProp",
           "Lamb"]


def __getattr__(name: str):
    raise _missing("mindspore.nn.optim", name)
