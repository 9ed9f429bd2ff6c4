"""``mindspore.train``: ``Model``, callbacks, metrics and checkpoints (MindSpore's ``.ckpt`` and
``.safetensors`` formats)."""

from .._validate import missing as _missing
from . import callback, metrics
from .callback import Callback, CheckpointConfig, LossMonitor, ModelCheckpoint, RunContext, TimeMonitor
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
]


def __getattr__(name: str):
    raise _missing("mindspore.train", name)
