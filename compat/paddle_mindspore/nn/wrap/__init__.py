"""``mindspore.nn.wrap``: the training wrapper cells (the same classes as ``mindspore.nn``'s)."""

from .._loss_scale import DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell, TrainOneStepWithLossScaleCell
from .._wrap import TrainOneStepCell, WithEvalCell, WithLossCell
from . import cell_wrapper, loss_scale

__all__ = [
    "cell_wrapper",
    "loss_scale",
    "TrainOneStepCell",
    "WithLossCell",
    "WithEvalCell",
    "TrainOneStepWithLossScaleCell",
    "DynamicLossScaleUpdateCell",
    "FixedLossScaleUpdateCell",
]
