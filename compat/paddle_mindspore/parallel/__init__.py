"""``mindspore.parallel``: layouts and the auto-parallel settings, for one device.

Everything here runs on a single device in PyNative mode, where MindSpore records sharding
strategies and parallel settings and computes as without them; see compat/README.md.
"""

from .._layout import Layout
from .._validate import missing as _missing
from ._algo import get_algo_parameters, reset_algo_parameters, set_algo_parameters
from ._auto_parallel_context import (
    ParallelMode,
    get_auto_parallel_context,
    reset_auto_parallel_context,
    set_auto_parallel_context,
)

__all__ = [
    "Layout",
    "ParallelMode",
    "get_auto_parallel_context",
    "set_auto_parallel_context",
    "set_algo_parameters",
    "get_algo_parameters",
    "reset_algo_parameters",
    "reset_auto_parallel_context",
]


def __getattr__(name: str):
    raise _missing("mindspore.parallel", name)
