"""``mindspore.amp``: the loss-scale managers (the same classes as ``mindspore.train``'s) and
``auto_mixed_precision`` at level ``O0``."""

from .._validate import missing as _missing
from ..train.loss_scale_manager import DynamicLossScaleManager, FixedLossScaleManager, LossScaleManager
from ._auto import auto_mixed_precision

__all__ = ["auto_mixed_precision", "LossScaleManager", "FixedLossScaleManager", "DynamicLossScaleManager"]


def __getattr__(name: str):
    raise _missing("mindspore.amp", name)
