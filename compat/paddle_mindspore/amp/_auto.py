"""``mindspore.amp.auto_mixed_precision``: level ``O0`` (no change) only."""

from __future__ import annotations

from typing import Any

from .._validate import not_provided

__all__ = ["auto_mixed_precision"]

_LEVELS = ("O0", "O1", "O2", "O3", "auto")


def auto_mixed_precision(network: Any, amp_level: str = "O0", dtype: Any = None) -> Any:
    """``O0`` returns ``network`` unchanged, as MindSpore does (mindcv's validate.py calls it with
    its default ``--val_amp_level O0``); the casting levels raise; an unknown level raises
    MindSpore's ``ValueError``."""
    if amp_level not in _LEVELS:
        raise ValueError(f"The amp level {amp_level} is not supported")
    if amp_level != "O0":
        raise not_provided(f"mindspore.amp.auto_mixed_precision(amp_level={amp_level!r})",
                           "only 'O0' (no casting) is provided")
    return network
