"""``mindspore.dataset.engine.datasets``: the dataset classes.

``Dataset`` is the layer's pipeline base (the same class as ``mindspore.dataset.Dataset``);
the engine's ``BatchDataset`` and ``RepeatDataset`` node classes are not provided and raise
``MissingAPIError`` when constructed (see ``_unprovided.py``).
"""

from ..._unprovided import unprovided_class
from .._pipeline import Dataset

__all__ = ["Dataset", "BatchDataset", "RepeatDataset"]

BatchDataset = unprovided_class("mindspore.dataset.engine.datasets.BatchDataset")
RepeatDataset = unprovided_class("mindspore.dataset.engine.datasets.RepeatDataset")
