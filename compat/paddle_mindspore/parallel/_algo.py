"""``mindspore.set_algo_parameters``: the strategy-search settings, recorded.

They steer the search of sharding strategies over several devices; on one device there is
nothing to search, and MindSpore records them. Unknown keys raise MindSpore's text.
"""

from __future__ import annotations

from typing import Any

__all__ = ["set_algo_parameters", "get_algo_parameters", "reset_algo_parameters"]

_DEFAULTS = {
    "fully_use_devices": True,
    "elementwise_op_strategy_follow": False,
    "enable_algo_approxi": False,
    "algo_approxi_epsilon": 0.1,
    "tensor_slice_align_enable": False,
    "tensor_slice_align_size": 16,
}
_VALUES = dict(_DEFAULTS)


def set_algo_parameters(**kwargs: Any) -> None:
    """Record strategy-search settings.

    Raises:
        ValueError: an unknown keyword (MindSpore's text).
    """
    for key in kwargs:
        if key not in _VALUES:
            raise ValueError(f"Set context keyword {key} is not recognized!")
    _VALUES.update(kwargs)


def get_algo_parameters(attr_key: str) -> Any:
    if attr_key not in _VALUES:
        raise ValueError(f"Get context keyword {attr_key} is not recognized!")
    return _VALUES[attr_key]


def reset_algo_parameters() -> None:
    _VALUES.clear()
    _VALUES.update(_DEFAULTS)
