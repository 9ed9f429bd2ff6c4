"""``mindspore.train``: the callback base; ``Model``, ``SummaryRecord`` and the loss-scale managers
are not provided (constructing one raises ``MissingAPIError``); any other name raises on access."""

from .._validate import missing as _missing
from .._validate import unprovided as _unprovided
from ._callback import Callback

_IMPORTED = ("Model", "SummaryRecord", "DynamicLossScaleManager", "FixedLossScaleManager", "LossScaleManager")
globals().update({name: _unprovided("mindspore.train", name) for name in _IMPORTED})

__all__ = ["Callback", *_IMPORTED]


def __getattr__(name: str):
    raise _missing("mindspore.train", name)
