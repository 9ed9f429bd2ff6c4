"""``mindspore.nn.wrap.loss_scale``: the loss-scale cells (the same classes as ``mindspore.nn``'s)."""

from .._loss_scale import DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell, TrainOneStepWithLossScaleCell

__all__ = ["DynamicLossScaleUpdateCell", "FixedLossScaleUpdateCell", "TrainOneStepWithLossScaleCell"]
