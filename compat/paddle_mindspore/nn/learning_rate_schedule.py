"""``mindspore.nn.learning_rate_schedule``: the learning-rate schedule cells (the same classes as
``mindspore.nn``'s)."""

from ._learning_rate import CosineDecayLR, LearningRateSchedule, WarmUpLR

__all__ = ["LearningRateSchedule", "CosineDecayLR", "WarmUpLR"]
