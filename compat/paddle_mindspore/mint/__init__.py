"""``mindspore.mint``: MindSpore's PyTorch-shaped functional ops, those mindformers uses."""

from .._validate import missing as _missing
from . import distributed, nn
from ._functions import argmax, ceil, cos, cumsum, exp, log, pow, sin, zeros

__all__ = ["distributed", "nn", "argmax", "ceil", "cos", "cumsum", "exp", "log", "pow", "sin", "zeros"]


def __getattr__(name: str):
    raise _missing("mindspore.mint", name)
