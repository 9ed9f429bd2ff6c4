"""``mindspore.train``: checkpoints (MindSpore's ``.ckpt`` and ``.safetensors`` formats)."""

from .._validate import missing as _missing
from .serialization import load_checkpoint, load_param_into_net, save_checkpoint

__all__ = ["save_checkpoint", "load_checkpoint", "load_param_into_net"]


def __getattr__(name: str):
    raise _missing("mindspore.train", name)
