"""paddle-recompute: activation recomputation for PaddlePaddle dygraph training."""

from ._api import recompute, recompute_sequential
from ._errors import RecomputeError
from ._hooks import saved_tensors_hooks
from ._layers import register_stateful_layer
from ._rng import register_rng_state

__all__ = [
    "RecomputeError",
    "recompute",
    "recompute_sequential",
    "register_rng_state",
    "register_stateful_layer",
    "saved_tensors_hooks",
]
__version__ = "0.1.0"
