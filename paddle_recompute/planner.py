"""Choose what to recompute under a memory budget: profile a model, plan, apply the plan.

* :func:`profile` measures what a model saves for backward, per block and sublayer, and the
  forward and recompute time of each.
* :func:`plan` picks, per block, the recompute option (none, the whole block, a sublayer, a
  policy) that minimises predicted recompute time under ``budget``; exact solvers.
* :func:`apply_plan` (or ``Plan.apply``) wires the plan into the model, reversibly: it
  returns an :class:`Applied` handle, the one undo handle that presets
  (``apply_recompute_granularity``) and ``testing.recompute_sublayers`` return too.
* :func:`plan_stage` plans one pipeline stage under a device budget shared by all stages,
  with its micro-batches in flight counted (:func:`stage_budget`: the arithmetic).
* :func:`scale_profile` builds the profile of a model too large to profile from profiles of
  a smaller configuration of it (fewer blocks, a shorter sequence, a smaller batch).
* :func:`transformer_layer_bytes` estimates what a transformer layer saves from its sizes
  alone (Korthikanti et al. 2022's count, generalised).
* ``recompute_sequential({"segments": "auto"}, ...)`` uses the same measurements to cut a
  chain into segments.

Options beyond the built-in ones are registered with :func:`register_option`,
:func:`kept_tensors_option` and :func:`register_policy_option`.

Example:
    >>> import paddle
    >>> from paddle_recompute import planner
    >>> def block():
    ...     return paddle.nn.Sequential(paddle.nn.Linear(8, 8), paddle.nn.Tanh(),
    ...                                 paddle.nn.Linear(8, 8), paddle.nn.Tanh())
    >>> model = paddle.nn.Sequential(*[block() for _ in range(3)])
    >>> x = paddle.randn([4, 8]); x.stop_gradient = False
    >>> handle = planner.apply_plan(model, planner.plan(model, x, budget=0.7))
    >>> model(x).sum().backward(); handle.remove()
"""

from ._entry.routing import Applied, route_forwards
from ._planner.options.analytic import korthikanti_bytes, transformer_layer_bytes
from ._planner.options.kinds import Candidate, kept_tensors_option, option_kinds, register_option
from ._planner.options.policies import register_policy_option
from ._planner.plan.make import plan
from ._planner.plan.pipeline import plan_stage, stage_budget
from ._planner.plan.value import AppliedPlan, BlockChoice, Plan, apply_plan
from ._planner.profile.measure import profile
from ._planner.profile.result import LayerProfile, Profile, SavedTensor
from ._planner.profile.scale import scale_profile
from ._planner.solvers.blocks import InfeasibleBudget

__all__ = [
    "Applied",
    "AppliedPlan",
    "BlockChoice",
    "Candidate",
    "InfeasibleBudget",
    "LayerProfile",
    "Plan",
    "Profile",
    "SavedTensor",
    "apply_plan",
    "kept_tensors_option",
    "korthikanti_bytes",
    "option_kinds",
    "plan",
    "plan_stage",
    "profile",
    "register_option",
    "register_policy_option",
    "route_forwards",
    "scale_profile",
    "stage_budget",
    "transformer_layer_bytes",
]
