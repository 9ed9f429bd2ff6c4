"""``mindspore.nn.cell``: the module that defines ``Cell``."""

from .._cell import Cell

__all__ = ["Cell"]
