"""``mindspore.parallel.shard``: ``Layout``."""

from .._layout import Layout
from .._unprovided import unprovided_class

__all__ = ["Layout", "_DistributedTensorInfo"]

_DistributedTensorInfo = unprovided_class("mindspore.parallel.shard._DistributedTensorInfo")
