"""``mindspore.profiler``: MindSpore's profiler (not provided; Paddle has its own).

Each name raises ``MissingAPIError`` when used; see ``_unprovided.py``.
"""

from enum import Enum

from .._unprovided import unprovided_class, unprovided_function

__all__ = [
    "Profiler",
    "ProfilerLevel",
    "_ExperimentalConfig",
    "profile",
    "schedule",
    "tensor_board_trace_handler",
    "tensorboard_trace_handler",
    "ProfilerActivity",
    "AicoreMetrics",
    "ExportType",
]

Profiler = unprovided_class("mindspore.profiler.Profiler")
_ExperimentalConfig = unprovided_class("mindspore.profiler._ExperimentalConfig")
profile = unprovided_class("mindspore.profiler.profile")
schedule = unprovided_class("mindspore.profiler.schedule")
tensor_board_trace_handler = unprovided_function("mindspore.profiler.tensor_board_trace_handler")
tensorboard_trace_handler = unprovided_function("mindspore.profiler.tensorboard_trace_handler")
ProfilerActivity = unprovided_class("mindspore.profiler.ProfilerActivity")
AicoreMetrics = unprovided_class("mindspore.profiler.AicoreMetrics")
ExportType = unprovided_class("mindspore.profiler.ExportType")


class ProfilerLevel(Enum):
    """The profiler's collection levels (an enumeration, as MindSpore's; the profiler itself raises)."""

    LevelNone = "LevelNone"
    Level0 = "Level0"
    Level1 = "Level1"
    Level2 = "Level2"
