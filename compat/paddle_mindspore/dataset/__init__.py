"""``mindspore.dataset``: data pipelines on numpy and Pillow (see compat/README.md for the coverage).

Sources: ``GeneratorDataset``, ``NumpySlicesDataset``, ``MnistDataset``, ``Cifar10Dataset``,
``Cifar100Dataset``, ``ImageFolderDataset``, with ``sampler=`` (``SequentialSampler``,
``RandomSampler``, ``DistributedSampler``, ``SubsetSampler``, ``SubsetRandomSampler``, a list of
indices, or any iterable of indices) or ``num_shards``/``shard_id``; operations: ``map``,
``batch``, ``shuffle``, ``repeat``, ``project``, ``rename``, ``skip``, ``take``,
``create_tuple_iterator``, ``create_dict_iterator``; transforms in ``dataset.vision`` and
``dataset.transforms``; ``dataset.config.set_seed``.
"""

from .._unprovided import unprovided_class as _unprovided_class
from .._validate import missing as _missing
from . import config, samplers, transforms, vision
from ._files import Cifar10Dataset, Cifar100Dataset, ImageFolderDataset, MnistDataset
from ._pipeline import Dataset
from ._sources import GeneratorDataset, NumpySlicesDataset
from .samplers import (
    DistributedSampler,
    IterSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    SubsetSampler,
)

__all__ = [
    # raise MissingAPIError when used:
    "MappableDataset", "MindDataset", "Shuffle", "SourceDataset", "VisionBaseDataset",
    "Dataset",
    "GeneratorDataset",
    "NumpySlicesDataset",
    "MnistDataset",
    "Cifar10Dataset",
    "Cifar100Dataset",
    "ImageFolderDataset",
    "config",
    "vision",
    "transforms",
    "samplers",
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "DistributedSampler",
    "SubsetSampler",
    "SubsetRandomSampler",
    "IterSampler",
]


# Raise MissingAPIError when used (see _unprovided.py).
MappableDataset = _unprovided_class("mindspore.dataset.MappableDataset")
MindDataset = _unprovided_class("mindspore.dataset.MindDataset")
Shuffle = _unprovided_class("mindspore.dataset.Shuffle")
SourceDataset = _unprovided_class("mindspore.dataset.SourceDataset")
VisionBaseDataset = _unprovided_class("mindspore.dataset.VisionBaseDataset")


def __getattr__(name: str):
    raise _missing("mindspore.dataset", name)
