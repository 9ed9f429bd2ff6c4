"""``mindspore.dataset``: data pipelines on numpy and Pillow (see compat/README.md for the coverage).

Sources: ``GeneratorDataset``, ``NumpySlicesDataset``, ``MnistDataset``, ``Cifar10Dataset``,
``ImageFolderDataset``; operations: ``map``, ``batch``, ``shuffle``, ``repeat``, ``project``,
``rename``, ``skip``, ``take``, ``create_tuple_iterator``, ``create_dict_iterator``; transforms in
``dataset.vision`` and ``dataset.transforms``; ``dataset.config.set_seed``.
"""

from .._validate import missing as _missing
from . import config, transforms, vision
from ._files import Cifar10Dataset, ImageFolderDataset, MnistDataset
from ._pipeline import Dataset
from ._sources import GeneratorDataset, NumpySlicesDataset

__all__ = [
    "Dataset",
    "GeneratorDataset",
    "NumpySlicesDataset",
    "MnistDataset",
    "Cifar10Dataset",
    "ImageFolderDataset",
    "config",
    "vision",
    "transforms",
]


def __getattr__(name: str):
    raise _missing("mindspore.dataset", name)
