"""``mindspore.context``: execution mode settings.

Everything runs eagerly on Paddle's dygraph whatever the mode; the mode is recorded (and
returned by :func:`get_context`) so MindSpore scripts that set it run unchanged. The results
do not depend on it: Paddle executes the same kernels either way.
"""

from __future__ import annotations

from typing import Any

from .parallel._auto_parallel_context import (
    ParallelMode,
    get_auto_parallel_context,
    reset_auto_parallel_context,
    set_auto_parallel_context,
)

__all__ = ["GRAPH_MODE", "PYNATIVE_MODE", "set_context", "get_context", "ParallelMode",
           "get_auto_parallel_context", "set_auto_parallel_context", "reset_auto_parallel_context",
           "set_device"]

GRAPH_MODE = 0
PYNATIVE_MODE = 1

_SETTINGS: dict[str, Any] = {"mode": PYNATIVE_MODE, "device_target": "CPU", "device_id": 0}
_DEVICES = ("CPU", "GPU")


def set_context(**kwargs: Any) -> None:
    """``mindspore.set_context``: ``mode``, ``device_target`` ('CPU'/'GPU') and ``device_id``.

    Raises:
        ValueError: an unknown mode or device.
        NotImplementedError: any other option (graph compilation, memory or profiling
            settings have no Paddle equivalent here).
    """
    unknown = sorted(set(kwargs) - set(_SETTINGS))
    if unknown:
        raise NotImplementedError(
            f"mindspore.set_context({unknown[0]}=...) is not provided by paddle_mindspore; "
            f"supported options: {sorted(_SETTINGS)}"
        )
    mode = kwargs.get("mode", _SETTINGS["mode"])
    if mode not in (GRAPH_MODE, PYNATIVE_MODE):
        raise ValueError(f"For 'set_context', the argument 'mode' should be context.GRAPH_MODE (0) "
                         f"or context.PYNATIVE_MODE (1), but got {mode}.")
    device = kwargs.get("device_target", _SETTINGS["device_target"])
    if device not in _DEVICES:
        raise ValueError(f"For 'set_context', 'device_target' must be one of {_DEVICES}, but got {device!r}.")
    _SETTINGS.update(kwargs)
    if "device_target" in kwargs or "device_id" in kwargs:
        _apply_device()


def _apply_device() -> None:
    import paddle

    if _SETTINGS["device_target"] == "CPU":
        paddle.set_device("cpu")
    else:
        paddle.set_device(f"gpu:{_SETTINGS['device_id']}")


def get_context(attr_key: str) -> Any:
    """``mindspore.get_context``."""
    if attr_key not in _SETTINGS:
        raise ValueError(f"Get context keyword {attr_key} is not recognized!")
    return _SETTINGS[attr_key]


def set_device(device_target: str, device_id: int | None = None) -> None:
    """``mindspore.set_device``: the same as ``set_context(device_target=..., device_id=...)``."""
    settings = {"device_target": device_target}
    if device_id is not None:
        settings["device_id"] = device_id
    set_context(**settings)
