"""paddle-recompute: activation recomputation for PaddlePaddle dygraph training."""

from . import policies
from ._api import recompute
from ._errors import RecomputeError
from ._hooks import saved_tensors_hooks
from ._layers import register_stateful_layer
from ._no_recompute import no_recompute
from ._patch import is_patched, paddle_patched, patch_paddle, unpatch_paddle
from ._plan import AppliedPlan, BlockChoice, Plan, apply_plan, plan
from ._plan_options import Candidate, kept_tensors_option, option_kinds, register_option
from ._plan_policies import register_policy_option
from ._planner_solve import InfeasibleBudget
from ._presets import apply_recompute_granularity
from ._profile import profile
from ._profile_result import LayerProfile, Profile, SavedTensor
from ._rng import register_rng_state
from ._save_on_cpu import save_on_cpu
from ._sequential import recompute_sequential
from ._tag import tag
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
    "apply_recompute_granularity",
    "checkpoint",
    "checkpoint_sequential",
    "is_patched",
    "kept_tensors_option",
    "no_recompute",
    "option_kinds",
    "paddle_patched",
    "patch_paddle",
    "plan",
    "policies",
    "profile",
    "recompute",
    "recompute_sequential",
    "register_option",
    "register_policy_option",
    "register_rng_state",
    "register_stateful_layer",
    "save_on_cpu",
    "saved_tensors_hooks",
    "tag",
    "unpatch_paddle",
]
__version__ = "0.1.0"
