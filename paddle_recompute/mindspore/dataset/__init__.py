"""``mindspore.dataset``: not provided (data loading stays with Paddle's ``paddle.io``).

The dataset classes that model-zoo code imports at load time exist as unprovided names:
constructing one raises ``MissingAPIError`` naming it; any other name raises on access.
"""

from .._validate import missing as _missing
from .._validate import unprovided as _unprovided
from . import transforms, vision

_IMPORTED = ("Cifar10Dataset", "Cifar100Dataset", "DistributedSampler", "ImageFolderDataset", "MnistDataset",
             "GeneratorDataset", "NumpySlicesDataset")
globals().update({name: _unprovided("mindspore.dataset", name) for name in _IMPORTED})

__all__ = ["transforms", "vision", *_IMPORTED]


def __getattr__(name: str):
    raise _missing("mindspore.dataset", name)
