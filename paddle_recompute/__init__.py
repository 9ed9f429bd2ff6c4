"""paddle-recompute: activation recomputation for PaddlePaddle dygraph training."""

from ._api import recompute
from ._errors import RecomputeError
from ._hooks import saved_tensors_hooks
from ._layers import register_stateful_layer
from ._patch import is_patched, paddle_patched, patch_paddle, unpatch_paddle
from ._plan import AppliedPlan, BlockChoice, Plan, apply_plan, plan
from ._plan_options import Candidate, kept_tensors_option, option_kinds, register_option
from ._planner_solve import InfeasibleBudget
from ._profile import profile
from ._profile_result import LayerProfile, Profile, SavedTensor
from ._rng import register_rng_state
from ._sequential import recompute_sequential
from ._torch_api import checkpoint, checkpoint_sequential

__all__ = [
    "AppliedPlan",
    "BlockChoice",
    "Candidate",
    "InfeasibleBudget",
    "LayerProfile",
    "Plan",
    "Profile",
    "RecomputeError",
    "SavedTensor",
    "apply_plan",
    "checkpoint",
    "checkpoint_sequential",
    "is_patched",
    "kept_tensors_option",
    "option_kinds",
    "paddle_patched",
    "patch_paddle",
    "plan",
    "profile",
    "recompute",
    "recompute_sequential",
    "register_option",
    "register_rng_state",
    "register_stateful_layer",
    "saved_tensors_hooks",
    "unpatch_paddle",
]
__version__ = "0.1.0"
