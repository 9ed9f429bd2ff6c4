"""``mindspore.ops.operations.comm_ops``: collective primitives (not provided: one device).

Each name raises ``MissingAPIError`` when used; see ``_unprovided.py``.
"""

from ..._unprovided import unprovided_class

__all__ = ["AlltoAllVC", "Broadcast", "AllGather", "ReduceScatter", "AlltoAll", "AlltoAllV"]

AlltoAllVC = unprovided_class("mindspore.ops.operations.comm_ops.AlltoAllVC")
Broadcast = unprovided_class("mindspore.ops.operations.comm_ops.Broadcast")
AllGather = unprovided_class("mindspore.ops.operations.comm_ops.AllGather")
ReduceScatter = unprovided_class("mindspore.ops.operations.comm_ops.ReduceScatter")
AlltoAll = unprovided_class("mindspore.ops.operations.comm_ops.AlltoAll")
AlltoAllV = unprovided_class("mindspore.ops.operations.comm_ops.AlltoAllV")
