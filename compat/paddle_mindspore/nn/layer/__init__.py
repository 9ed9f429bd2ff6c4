"""``mindspore.nn.layer``: the layer cells (the same classes as ``mindspore.nn``'s)."""

from ..._validate import missing as _missing
from .._basic import Dense

__all__ = ["Dense"]


def __getattr__(name: str):
    raise _missing("mindspore.nn.layer", name)
