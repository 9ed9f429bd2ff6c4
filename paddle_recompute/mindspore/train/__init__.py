"""``mindspore.train``: ``Model``, callbacks, metrics and checkpoints (MindSpore's ``.ckpt`` and
``.safetensors`` formats)."""

from .._validate import missing as _missing
from .._validate import unprovided as _unprovided
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
]

# Imported by model-zoo code at load time; constructing one raises MissingAPIError naming it.
_IMPORTED = ("SummaryRecord",)
globals().update({name: _unprovided("mindspore.train", name) for name in _IMPORTED})
__all__ += list(_IMPORTED)


def __getattr__(name: str):
    raise _missing("mindspore.train", name)
