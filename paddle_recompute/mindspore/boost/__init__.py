"""``mindspore.boost``: not provided; ``GradientAccumulation`` (imported by model-zoo code at load
time) raises ``MissingAPIError`` when constructed, any other name on access."""

from .._cell import Cell as _Cell
from .._validate import missing as _missing
from .._validate import unprovided as _unprovided
from . import grad_accumulation

GradientAccumulation = _unprovided("mindspore.boost", "GradientAccumulation", _Cell)

__all__ = ["GradientAccumulation", "grad_accumulation"]


def __getattr__(name: str):
    raise _missing("mindspore.boost", name)
