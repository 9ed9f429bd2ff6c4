"""``mindspore.dataset.vision.transforms``: the same classes as ``mindspore.dataset.vision``."""

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

__all__ = [
    "RandomAffine",
    "RandomRotation",
    "GaussianBlur",
    "AutoContrast",
    "Equalize",
    "Invert",
    "RandomColor",
    "RandomColorAdjust",
    "RandomPosterize",
    "RandomSharpness",
    "RandomSolarize",
    "RandomCropDecodeResize",
    "RandomErasing",
    "CenterCrop",
    "RandomCrop",
    "RandomHorizontalFlip",
    "RandomResizedCrop",
    "RandomVerticalFlip",
    "Resize",
    "HWC2CHW",
    "Decode",
    "Normalize",
    "Rescale",
    "ToTensor",
]
