"""``mindspore.parallel._utils``: the readers of the auto-parallel settings mindformers calls."""

from __future__ import annotations

from ._auto_parallel_context import ParallelMode, auto_parallel_context

__all__ = [
    "_get_parallel_mode",
    "_get_device_num",
    "_get_global_rank",
    "_get_pipeline_stages",
    "_get_enable_parallel_optimizer",
    "_get_full_batch",
    "_get_gradients_mean",
    "_is_in_auto_parallel_mode",
    "_is_in_data_parallel_mode",
    "_is_in_hybrid_parallel_mode",
    "_is_sharding_propagation",
]


def _get_parallel_mode() -> str:
    return auto_parallel_context().get_parallel_mode()


def _get_device_num() -> int:
    return auto_parallel_context().get_device_num()


def _get_global_rank() -> int:
    return auto_parallel_context().get_global_rank()


def _get_pipeline_stages() -> int:
    return auto_parallel_context().get_pipeline_stages()


def _get_enable_parallel_optimizer() -> bool:
    return auto_parallel_context().get_enable_parallel_optimizer()


def _get_full_batch() -> bool:
    return auto_parallel_context().get_full_batch()


def _get_gradients_mean() -> bool:
    return auto_parallel_context().get("gradients_mean")


def _is_in_auto_parallel_mode() -> bool:
    return _get_parallel_mode() in (ParallelMode.SEMI_AUTO_PARALLEL, ParallelMode.AUTO_PARALLEL)


def _is_in_data_parallel_mode() -> bool:
    return _get_parallel_mode() == ParallelMode.DATA_PARALLEL


def _is_in_hybrid_parallel_mode() -> bool:
    return _get_parallel_mode() == ParallelMode.HYBRID_PARALLEL


def _is_sharding_propagation() -> bool:
    context = auto_parallel_context()
    return context.get("search_mode") == "sharding_propagation" or context.get_sharding_propagation()
