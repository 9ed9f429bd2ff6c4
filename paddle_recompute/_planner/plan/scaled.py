"""Planning on a scaled profile without running the model (NOTE [ Scaled profiles ] in
``_planner/profile/scale.py``)."""

from __future__ import annotations

from ..options.ops import KIND as OPS
from ..options.policies import POLICY_KINDS
from ..profile.result import Profile
from ..profile.scale import SCALED

__all__ = ["is_scaled", "without_measurements"]


def is_scaled(prof: Profile) -> bool:
    """True for a profile made by ``scale_profile``."""
    return bool(prof.structure and SCALED in prof.structure)


def without_measurements(prof: Profile, kinds: tuple, final_rounds: int) -> tuple[tuple, int]:
    """``(kinds, final_rounds)`` for ``plan`` on ``prof``: unchanged for a measured profile;
    for a scaled one, the kinds that need no measurement in the model (not ``ops``, and
    policy kinds only when every block carries their measured costs) and no final
    measurement, so the model (which may not fit) is never run.

    Raises:
        ValueError: every kind asked for needs a measurement in the model.
    """
    if not is_scaled(prof):
        return kinds, final_rounds
    kept = tuple(k for k in kinds if k != OPS and (
        k not in POLICY_KINDS or all(prof.policy_costs.get(b, {}).get(k) is not None
                                     for b in prof.blocks)))
    if not kept:
        raise ValueError(f"plan: a profile from scale_profile plans without running the model, "
                         f"so it offers only options priced without measuring it ('full', 'sub', "
                         f"kept-tensor kinds, policy kinds measured on the small model); every "
                         f"kind in {list(kinds)} needs a measurement; pass options=['full', 'sub']")
    return kept, 0
