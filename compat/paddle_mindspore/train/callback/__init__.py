"""``mindspore.train.callback``: ``Callback``, ``RunContext``, ``LossMonitor``, ``TimeMonitor``,
``ModelCheckpoint`` and ``CheckpointConfig``."""

from ..._unprovided import unprovided_class as _unprovided_class
from ..._validate import missing as _missing
from ._callback import Callback, CallbackParams, RunContext
from ._checkpoint import CheckpointConfig, ModelCheckpoint
from ._monitors import LossMonitor, TimeMonitor

__all__ = [
    "SummaryCollector", "TrainFaultTolerance",  # raise MissingAPIError when used
    "Callback",
    "RunContext",
    "LossMonitor",
    "TimeMonitor",
    "ModelCheckpoint",
    "CheckpointConfig",
    "CallbackParams",
]


# Raise MissingAPIError when used (see _unprovided.py).
SummaryCollector = _unprovided_class("mindspore.train.callback.SummaryCollector")
TrainFaultTolerance = _unprovided_class("mindspore.train.callback.TrainFaultTolerance")


def __getattr__(name: str):
    raise _missing("mindspore.train.callback", name)
