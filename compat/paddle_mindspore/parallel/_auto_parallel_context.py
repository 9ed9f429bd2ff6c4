"""``mindspore.parallel._auto_parallel_context``: the auto-parallel settings.

On one device in PyNative mode MindSpore records these settings and reads them back; the
arithmetic of a single-device run does not depend on them. The defaults below are MindSpore
2.10's on one CPU device (read from it); unknown keys raise its ``ValueError`` texts.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = [
    "ParallelMode",
    "auto_parallel_context",
    "get_auto_parallel_context",
    "set_auto_parallel_context",
    "reset_auto_parallel_context",
]


class ParallelMode:
    """``mindspore.ParallelMode``: the parallel mode names."""

    STAND_ALONE = "stand_alone"
    DATA_PARALLEL = "data_parallel"
    HYBRID_PARALLEL = "hybrid_parallel"
    SEMI_AUTO_PARALLEL = "semi_auto_parallel"
    AUTO_PARALLEL = "auto_parallel"
    MODE_LIST = [STAND_ALONE, DATA_PARALLEL, HYBRID_PARALLEL, SEMI_AUTO_PARALLEL, AUTO_PARALLEL]


_DEFAULTS: dict[str, Any] = {
    "device_num": 1,
    "global_rank": 0,
    "gradients_mean": False,
    "gradient_fp32_sync": True,
    "loss_repeated_mean": True,
    "parallel_mode": ParallelMode.STAND_ALONE,
    "search_mode": "recursive_programming",
    "auto_parallel_search_mode": "recursive_programming",
    "parameter_broadcast": False,
    "strategy_ckpt_load_file": "",
    "strategy_ckpt_save_file": "",
    "full_batch": False,
    "dataset_strategy": "data_parallel",
    "enable_parallel_optimizer": False,
    "enable_alltoall": False,
    "all_reduce_fusion_config": [],
    "pipeline_stages": 1,
    "pipeline_result_broadcast": False,
    "grad_accumulation_step": 1,
    "auto_pipeline": False,
    "comm_fusion": {
        "openstate": True,
        "allreduce": {"mode": "auto", "config": None},
        "allgather": {"mode": "auto", "config": None},
        "reducescatter": {"mode": "auto", "config": None},
    },
    "strategy_ckpt_config": {"load_file": "", "save_file": "", "only_trainable_params": True},
    "dump_local_norm": False,
    "dump_local_norm_path": "",
    "dump_device_local_norm": False,
    "sharding_propagation": False,
    "optimizer_weight_shard_size": -1,
    "pipeline_scheduler": "1f1b",
    "pipeline_interleave": False,
    "force_fp32_communication": False,
}


class _AutoParallelContext:
    """The settings, as MindSpore's ``auto_parallel_context()`` object holds them."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self._values = copy.deepcopy(_DEFAULTS)

    def get(self, key: str) -> Any:
        if key not in self._values:
            raise ValueError(f"Get context keyword {key} is not recognized!")
        return self._values[key]

    def set(self, **kwargs: Any) -> None:
        for key in kwargs:
            if key not in self._values:
                raise ValueError(f"Set context keyword {key} is not recognized!")
        mode = kwargs.get("parallel_mode", self._values["parallel_mode"])
        if mode not in ParallelMode.MODE_LIST:
            raise ValueError(
                "The context configuration parameter 'parallel_mode' only support 'stand_alone', "
                "'data_parallel', 'hybrid_parallel', 'semi_auto_parallel' and 'auto_parallel', "
                f"but got the value : {mode}."
            )
        self._values.update(kwargs)

    def get_parallel_mode(self) -> str:
        return self._values["parallel_mode"]

    def get_device_num(self) -> int:
        return self._values["device_num"]

    def get_global_rank(self) -> int:
        return self._values["global_rank"]

    def get_pipeline_stages(self) -> int:
        return self._values["pipeline_stages"]

    def get_enable_parallel_optimizer(self) -> bool:
        return self._values["enable_parallel_optimizer"]

    def get_full_batch(self) -> bool:
        return self._values["full_batch"]

    def get_sharding_propagation(self) -> bool:
        return self._values["sharding_propagation"]


_CONTEXT = _AutoParallelContext()


def auto_parallel_context() -> _AutoParallelContext:
    """The process's auto-parallel settings object."""
    return _CONTEXT


def get_auto_parallel_context(attr_key: str) -> Any:
    """``mindspore.get_auto_parallel_context``.

    Raises:
        ValueError: an unknown key (MindSpore's text).
    """
    return _CONTEXT.get(attr_key)


def set_auto_parallel_context(**kwargs: Any) -> None:
    """``mindspore.set_auto_parallel_context``: records the settings (one device: nothing to split).

    Raises:
        ValueError: an unknown key or parallel mode (MindSpore's texts).
    """
    _CONTEXT.set(**kwargs)


def reset_auto_parallel_context() -> None:
    """``mindspore.reset_auto_parallel_context``."""
    _CONTEXT.reset()
