"""``mindspore.nn.optim``: the optimizers (also re-exported by ``mindspore.nn``)."""

from ..._unprovided import unprovided_class as _unprovided_class
from ..._validate import missing as _missing
from . import optimizer
from ._adaptive import Adagrad, Lamb, RMSProp
from ._rules import SGD, Adam, AdamWeightDecay, Momentum
from .optimizer import Optimizer

__all__ = ["optimizer", "Optimizer", "SGD", "Momentum", "Adam", "AdamWeightDecay", "Adagrad", "RMSProp",
           "Lamb"]

__all__ += ["AdaFactor"]

# mindformers' optimizer registry imports it; it raises MissingAPIError when constructed.
AdaFactor = _unprovided_class("mindspore.nn.optim.AdaFactor")


def __getattr__(name: str):
    raise _missing("mindspore.nn.optim", name)
