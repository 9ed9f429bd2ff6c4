"""``mindspore.nn.loss``: the loss cells (the same classes as ``mindspore.nn``'s)."""

from ._loss import CrossEntropyLoss, KLDivLoss, L1Loss, LossBase, MSELoss, SoftmaxCrossEntropyWithLogits

__all__ = ["CrossEntropyLoss", "KLDivLoss", "L1Loss", "LossBase", "MSELoss", "SoftmaxCrossEntropyWithLogits"]
