"""``mindspore.dataset.vision``: image transforms on numpy HWC arrays (and Pillow images)."""

from ..._validate import missing as _missing
from . import transforms, utils  # noqa: E402,I001  (submodules over the classes above)
from ._affine import RandomAffine, RandomRotation
from ._blur import GaussianBlur
from ._enhance import (
    AutoContrast,
    Equalize,
    Invert,
    RandomColor,
    RandomColorAdjust,
    RandomPosterize,
    RandomSharpness,
    RandomSolarize,
)
from ._erase import RandomCropDecodeResize, RandomErasing
from ._geometry import (
    CenterCrop,
    RandomCrop,
    RandomHorizontalFlip,
    RandomResizedCrop,
    RandomVerticalFlip,
    Resize,
)
from ._pixels import HWC2CHW, Decode, Normalize, Rescale, ToTensor
from ._types import Border, Inter

__all__ = [
    "transforms",
    "utils",
    "Decode",
    "Resize",
    "CenterCrop",
    "RandomCrop",
    "RandomResizedCrop",
    "RandomHorizontalFlip",
    "Rescale",
    "Normalize",
    "HWC2CHW",
    "ToTensor",
    "Inter",
    "Border",
    "RandomVerticalFlip",
    "RandomRotation",
    "RandomAffine",
    "Invert",
    "Equalize",
    "AutoContrast",
    "RandomPosterize",
    "RandomSolarize",
    "RandomColor",
    "RandomSharpness",
    "RandomColorAdjust",
    "RandomErasing",
    "RandomCropDecodeResize",
    "GaussianBlur",
]


def __getattr__(name: str):
    raise _missing("mindspore.dataset.vision", name)
