"""``mindspore.train``: checkpoints (MindSpore's ``.ckpt`` and ``.safetensors`` formats) and the
callback base; ``Model``, ``SummaryRecord`` and the loss-scale managers are not provided
(constructing one raises ``MissingAPIError``); any other name raises on access."""

from .._validate import missing as _missing
from .._validate import unprovided as _unprovided
from ._callback import Callback
from .serialization import load_checkpoint, load_param_into_net, save_checkpoint

_IMPORTED = ("Model", "SummaryRecord", "DynamicLossScaleManager", "FixedLossScaleManager", "LossScaleManager")
globals().update({name: _unprovided("mindspore.train", name) for name in _IMPORTED})

__all__ = ["Callback", "save_checkpoint", "load_checkpoint", "load_param_into_net", *_IMPORTED]


def __getattr__(name: str):
    raise _missing("mindspore.train", name)
