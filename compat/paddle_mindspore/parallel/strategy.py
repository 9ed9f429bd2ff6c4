"""``mindspore.parallel.strategy``: strategy files of multi-device runs (not provided)."""

from .._unprovided import unprovided_function

__all__ = ["get_strategy_metadata", "enable_save_strategy_online"]

get_strategy_metadata = unprovided_function("mindspore.parallel.strategy.get_strategy_metadata")
enable_save_strategy_online = unprovided_function("mindspore.parallel.strategy.enable_save_strategy_online")
