"""``mindspore.train.node_strategy_pb2``: strategy-file protobufs (not provided).

Each name raises ``MissingAPIError`` when used; see ``_unprovided.py``.
"""

from .._unprovided import unprovided_class

__all__ = ["ParallelStrategyMap"]

ParallelStrategyMap = unprovided_class("mindspore.train.node_strategy_pb2.ParallelStrategyMap")
