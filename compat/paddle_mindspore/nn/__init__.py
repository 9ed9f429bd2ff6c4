"""``mindspore.nn``: Cell, layers, containers, losses, optimizers, learning rates, training wrappers."""

from .._cell import Cell
from .._unprovided import unprovided_class as _unprovided_class
from .._validate import missing as _missing
from . import cell, metrics, optim
from ._activation import GELU, HSigmoid, HSwish, LayerNorm, LogSoftmax, ReLU6, Sigmoid, SiLU, Softmax, Tanh
from ._basic import Dense, Dropout, Flatten, Identity, OneHot, ReLU
from ._containers import CellDict, CellList, SequentialCell
from ._conv import AdaptiveAvgPool2d, AvgPool2d, Conv1d, Conv2d, Conv3d, MaxPool2d
from ._conv_transpose import Conv1dTranspose, Conv2dTranspose, Conv3dTranspose
from ._embedding import Embedding
from ._learning_rate import (
    CosineDecayLR,
    LearningRateSchedule,
    WarmUpLR,
    cosine_decay_lr,
    exponential_decay_lr,
    inverse_decay_lr,
    natural_exp_decay_lr,
    piecewise_constant_lr,
    polynomial_decay_lr,
    warmup_lr,
)
from ._loss import CrossEntropyLoss, KLDivLoss, L1Loss, LossBase, MSELoss, SoftmaxCrossEntropyWithLogits
from ._loss_scale import DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell, TrainOneStepWithLossScaleCell
from ._norm import BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm, SyncBatchNorm
from ._padding import ConstantPad2d, Pad, ZeroPad2d
from ._unfold import Unfold
from ._wrap import TrainOneStepCell, WithEvalCell, WithLossCell
from .metrics import (
    Accuracy,
    Loss,
    Metric,
    Precision,
    Recall,
    Top1CategoricalAccuracy,
    Top5CategoricalAccuracy,
    TopKCategoricalAccuracy,
)
from .optim import SGD, Adagrad, Adam, AdamWeightDecay, Lamb, Momentum, Optimizer, RMSProp

__all__ = [
    "Cell", "Dense", "Dropout", "Flatten", "Identity", "OneHot", "ReLU", "GELU", "SiLU", "Sigmoid", "Tanh",
    "ReLU6", "HSigmoid", "HSwish", "Softmax", "LogSoftmax", "LayerNorm", "Embedding",
    "CellList", "SequentialCell", "CellDict", "AvgPool2d", "AdaptiveAvgPool2d", "Conv1d", "Conv2d", "Conv3d",
    "Conv1dTranspose", "Conv2dTranspose", "Conv3dTranspose", "MaxPool2d", "BatchNorm1d",
    "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "GroupNorm", "Pad", "ConstantPad2d", "ZeroPad2d",
    "LossBase", "MSELoss", "L1Loss", "CrossEntropyLoss", "SoftmaxCrossEntropyWithLogits", "optim",
    "Optimizer", "metrics",
    "SGD", "Momentum", "Adam", "AdamWeightDecay", "WithLossCell", "TrainOneStepCell", "cell",
    "TrainOneStepWithLossScaleCell", "LearningRateSchedule", "CosineDecayLR", "WarmUpLR", "cosine_decay_lr",
    "exponential_decay_lr", "inverse_decay_lr", "natural_exp_decay_lr", "piecewise_constant_lr",
    "polynomial_decay_lr", "warmup_lr", "Unfold", "KLDivLoss", "WithEvalCell", "Adagrad", "RMSProp", "Lamb",
    "DynamicLossScaleUpdateCell", "FixedLossScaleUpdateCell",
    # the metrics MindSpore also exposes in mindspore.nn (the same classes as mindspore.train's)
    "Metric", "Accuracy", "Loss", "Precision", "Recall", "TopKCategoricalAccuracy", "Top1CategoricalAccuracy",
    "Top5CategoricalAccuracy",
]

__all__ += ["layer", "learning_rate_schedule", "loss", "utils", "wrap", "MicroBatchInterleaved",
            "PipelineCell"]

from . import layer, learning_rate_schedule, loss, utils, wrap  # noqa: E402  (submodules over the names above)

# Multi-device training cells mindformers imports at module level: they raise MissingAPIError
# when constructed (see _unprovided.py).
MicroBatchInterleaved = _unprovided_class("mindspore.nn.MicroBatchInterleaved")
PipelineCell = _unprovided_class("mindspore.nn.PipelineCell")


def __getattr__(name: str):
    raise _missing("mindspore.nn", name)
