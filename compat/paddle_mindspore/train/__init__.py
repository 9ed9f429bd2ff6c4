"""``mindspore.train``: ``Model``, callbacks, metrics, loss-scale managers, checkpoints (MindSpore's
``.ckpt`` and ``.safetensors`` formats) and ``SummaryRecord`` (scalars)."""

from .._validate import missing as _missing
from . import callback, metrics
from .callback import Callback, CheckpointConfig, LossMonitor, ModelCheckpoint, RunContext, TimeMonitor
from .loss_scale_manager import DynamicLossScaleManager, FixedLossScaleManager, LossScaleManager
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
from .model import Model
from .serialization import load_checkpoint, load_param_into_net, save_checkpoint
from .summary import SummaryRecord

__all__ = [
    "Model",
    "Callback",
    "RunContext",
    "LossMonitor",
    "TimeMonitor",
    "ModelCheckpoint",
    "CheckpointConfig",
    "Metric",
    "Accuracy",
    "Loss",
    "Precision",
    "Recall",
    "TopKCategoricalAccuracy",
    "Top1CategoricalAccuracy",
    "Top5CategoricalAccuracy",
    "save_checkpoint",
    "load_checkpoint",
    "load_param_into_net",
    "callback",
    "metrics",
    "LossScaleManager",
    "FixedLossScaleManager",
    "DynamicLossScaleManager",
    "SummaryRecord",
]


def __getattr__(name: str):
    raise _missing("mindspore.train", name)
