"""``mindspore.train.callback``: ``Callback``, ``RunContext``, ``LossMonitor``, ``TimeMonitor``,
``ModelCheckpoint`` and ``CheckpointConfig``."""

from ..._validate import missing as _missing
from ._callback import Callback, CallbackParams, RunContext
from ._checkpoint import CheckpointConfig, ModelCheckpoint
from ._monitors import LossMonitor, TimeMonitor

__all__ = [
    "Callback",
    "RunContext",
    "LossMonitor",
    "TimeMonitor",
    "ModelCheckpoint",
    "CheckpointConfig",
    "CallbackParams",
]


def __getattr__(name: str):
    raise _missing("mindspore.train.callback", name)
