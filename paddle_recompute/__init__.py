"""paddle-recompute: activation recomputation for PaddlePaddle dygraph training.

The names here are the ones used every day.  The planner (profile, plan, apply_plan, ...)
lives in :mod:`paddle_recompute.planner`, the policies in :mod:`paddle_recompute.policies`,
the loss-parity kit in :mod:`paddle_recompute.testing`, the MindSpore layer in
:mod:`paddle_mindspore`.  ARCHITECTURE.md describes the layers below.
"""

import sys as _sys

from . import planner, policies, testing
from ._core.errors import RecomputeError
from ._core.hooks import saved_tensors_hooks
from ._core.layers import register_stateful_layer
from ._core.rng import register_rng_state
from ._core.to_static import keep_out_of_ast as _keep_out_of_ast
from ._entry.presets import apply_recompute_granularity
from ._entry.recompute import recompute
from ._interop.hybrid import recompute_hybrid
from ._interop.patch import is_patched, paddle_patched, patch_paddle, unpatch_paddle
from ._interop.sequential import recompute_sequential
from ._interop.torch_api import checkpoint, checkpoint_sequential
from ._selective.no_recompute import no_recompute
from ._selective.save_on_cpu import save_on_cpu
from ._selective.tag import tag

__all__ = [
    "RecomputeError",
    "apply_recompute_granularity",
    "checkpoint",
    "checkpoint_sequential",
    "is_patched",
    "no_recompute",
    "paddle_patched",
    "patch_paddle",
    "planner",
    "policies",
    "recompute",
    "recompute_hybrid",
    "recompute_sequential",
    "register_rng_state",
    "register_stateful_layer",
    "save_on_cpu",
    "saved_tensors_hooks",
    "tag",
    "testing",
    "unpatch_paddle",
]
__version__ = "0.1.0"

_keep_out_of_ast(_sys.modules[__name__])  # NOTE [ to_static ] in _core/to_static.py
