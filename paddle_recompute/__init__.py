"""paddle-recompute: activation recomputation for PaddlePaddle dygraph training."""

from ._api import recompute
from ._errors import RecomputeError
from ._hooks import saved_tensors_hooks
from ._layers import register_stateful_layer
from ._patch import is_patched, paddle_patched, patch_paddle, unpatch_paddle
from ._rng import register_rng_state
from ._sequential import recompute_sequential
from ._torch_api import checkpoint, checkpoint_sequential

__all__ = [
    "RecomputeError",
    "checkpoint",
    "checkpoint_sequential",
    "is_patched",
    "paddle_patched",
    "patch_paddle",
    "recompute",
    "recompute_sequential",
    "register_rng_state",
    "register_stateful_layer",
    "saved_tensors_hooks",
    "unpatch_paddle",
]
__version__ = "0.1.0"
