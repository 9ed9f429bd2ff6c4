"""``mindspore.parallel._cost_model_context``: cost-model settings of the strategy search.

mindformers sets two of them when it configures auto parallel; on one device there is no
search, so they are recorded only.
"""

from __future__ import annotations

__all__ = [
    "_set_multi_subgraphs",
    "_get_multi_subgraphs",
    "_set_rp_matmul_mem_coef",
    "_get_rp_matmul_mem_coef",
]

_VALUES = {"multi_subgraphs": False, "rp_matmul_mem_coef": 0.1}


def _set_multi_subgraphs(multi_subgraph: bool = True) -> None:
    _VALUES["multi_subgraphs"] = multi_subgraph


def _get_multi_subgraphs() -> bool:
    return _VALUES["multi_subgraphs"]


def _set_rp_matmul_mem_coef(coef: float) -> None:
    _VALUES["rp_matmul_mem_coef"] = coef


def _get_rp_matmul_mem_coef() -> float:
    return _VALUES["rp_matmul_mem_coef"]
