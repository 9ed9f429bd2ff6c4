"""``mindspore.amp``: the loss-scale managers (the same classes as ``mindspore.train``'s)."""

from .._validate import missing as _missing
from ..train.loss_scale_manager import DynamicLossScaleManager, FixedLossScaleManager, LossScaleManager

__all__ = ["LossScaleManager", "FixedLossScaleManager", "DynamicLossScaleManager"]


def __getattr__(name: str):
    raise _missing("mindspore.amp", name)
