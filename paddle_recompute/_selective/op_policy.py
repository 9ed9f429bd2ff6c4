"""A policy keyed by operator position: what the planner's operator-level option applies.

The planner profiles a block's operators, numbers them as a policy region does (every
observed operator call, from 0), and decides per operator whether its outputs are kept,
offloaded or recomputed (NOTE [ Operator model ] in ``_planner/solvers/ops.py``).  The
decision is only meaningful for the operators profiled, so the policy checks each question
against the profiled sequence and raises when the block runs something else.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._core.errors import RecomputeError
from .policies import OFFLOAD, PolicyInfo

__all__ = ["OpPolicy"]


@dataclass(frozen=True, repr=False)
class OpPolicy:
    """Keep the outputs of the operators at ``keep``, offload those at ``offload``.

    Attributes:
        ops: the profiled operator names, by position in the region's forward.
        keep: positions whose outputs are kept on the device.
        offload: positions whose outputs go to the host until backward.
        block: what the policy was made for (named in errors), e.g. ``"model.layers.0"``.

    Raises (when called):
        RecomputeError: the region runs another operator at a position, or more operators,
            than were profiled.

    Example:
        >>> from paddle_recompute._selective.op_policy import OpPolicy
        >>> OpPolicy(("linear", "gelu", "linear"), keep=frozenset({0}), block="mlp")
        OpPolicy('mlp': keep 1, offload 0 of 3 operators)
    """

    ops: tuple[str, ...]
    keep: frozenset[int] = frozenset()
    offload: frozenset[int] = frozenset()
    block: str = ""

    def __post_init__(self):
        n = len(self.ops)
        bad = sorted(p for p in self.keep | self.offload if not 0 <= p < n)
        if bad or self.keep & self.offload:
            raise ValueError(f"OpPolicy: positions {bad or sorted(self.keep & self.offload)} are "
                             f"outside 0..{n - 1} or both kept and offloaded")

    def __call__(self, info: PolicyInfo):
        p = info.position
        if p is None:  # asked again for a tagged tensor: positions decide, names do not
            return False
        if p >= len(self.ops) or self.ops[p] != info.op:
            expected = f"{self.ops[p]!r}" if p < len(self.ops) else f"only {len(self.ops)} operators"
            raise RecomputeError(
                f"recompute(policy=OpPolicy): block {self.block!r} ran operator #{p} {info.op!r} "
                f"where its profile has {expected}; the block differs from the one the plan "
                f"was made for (other shapes, config or code path): plan it again")
        if info.output_index and info.op.startswith("dropout"):
            return False  # dropout's mask: the model keeps or reruns the operator as a whole
        if p in self.offload:
            return OFFLOAD
        return p in self.keep

    def __repr__(self) -> str:
        return (f"OpPolicy({self.block!r}: keep {len(self.keep)}, offload {len(self.offload)} "
                f"of {len(self.ops)} operators)")

    def to_dict(self) -> dict:
        return {"ops": list(self.ops), "keep": sorted(self.keep), "offload": sorted(self.offload),
                "block": self.block}

    @classmethod
    def from_dict(cls, data: dict) -> OpPolicy:
        return cls(tuple(data["ops"]), frozenset(data["keep"]), frozenset(data["offload"]),
                   data.get("block", ""))
