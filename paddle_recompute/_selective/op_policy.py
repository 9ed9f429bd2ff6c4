"""A policy keyed by operator position: what the planner's operator-level option applies.

The planner profiles a block's operators, numbers them as a policy region does (every
observed operator call, from 0), and decides per operator whether its outputs are kept,
offloaded or recomputed (NOTE [ Operator model ] in ``_planner/solvers/ops.py``).  The
decision is only meaningful for the operators profiled, so the policy checks each question
against the profiled sequence and raises when the block runs something else.

NOTE [ Operator sequences that vary ]: a mixture-of-experts block runs the operators of the
experts that got tokens, so its sequence depends on the batch: an expert with no tokens
skips its operators and every later position shifts.  A policy made with
``by_occurrence=True`` (the planner's) keys its decisions by operator name and occurrence
(the k-th ``"linear"`` of the region, ``PolicyInfo.occurrence``) instead of position, so a
batch whose sequence matches the profile is decided exactly as by position, and in a batch
that skips or adds calls the k-th call of each operator takes the k-th profiled call's
decision (another expert's when an earlier expert was skipped: alike in kind, not in size).  A
call with no profiled counterpart (more calls of an operator than were profiled: an expert
that had no tokens when profiled gets some) is recomputed, and the policy warns once that
its block ran calls its profile does not have.  An operator the profile never ran at all
is another code path or another model, not another routing: that raises, as by position.
Every decision is exact: a policy region recomputes exactly whatever it does not keep
(NOTE [ Selective recompute ]); what varies is only how much a batch holds (an expert with
more tokens keeps larger outputs), which stays near the plan while the experts' loads are
alike.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

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
        by_occurrence: key decisions by operator name and occurrence, not position, and
            recompute (warning once) the calls of profiled operators beyond those profiled,
            for blocks whose operator sequence depends on the batch (NOTE [ Operator
            sequences that vary ]).

    Raises (when called):
        RecomputeError: the region runs another operator at a position, or more operators,
            than were profiled; with ``by_occurrence``, an operator it never profiled.

    Example:
        >>> from paddle_recompute._selective.op_policy import OpPolicy
        >>> OpPolicy(("linear", "gelu", "linear"), keep=frozenset({0}), block="mlp")
        OpPolicy('mlp': keep 1, offload 0 of 3 operators)
    """

    ops: tuple[str, ...]
    keep: frozenset[int] = frozenset()
    offload: frozenset[int] = frozenset()
    block: str = ""
    by_occurrence: bool = False
    # (name, occurrence) -> position, and whether it warned (NOTE [ Operator sequences that vary ])
    _at: dict = field(init=False, compare=False, repr=False)
    _warned: list = field(init=False, compare=False, repr=False)

    def __post_init__(self):
        n = len(self.ops)
        bad = sorted(p for p in self.keep | self.offload if not 0 <= p < n)
        if bad or self.keep & self.offload:
            raise ValueError(f"OpPolicy: positions {bad or sorted(self.keep & self.offload)} are "
                             f"outside 0..{n - 1} or both kept and offloaded")
        at, seen = {}, {}
        for p, name in enumerate(self.ops):
            at[name, seen.get(name, 0)] = p
            seen[name] = seen.get(name, 0) + 1
        object.__setattr__(self, "_at", at)
        object.__setattr__(self, "_warned", [])

    def __call__(self, info: PolicyInfo):
        p = info.position
        if p is None:  # asked again for a tagged tensor: positions decide, names do not
            return False
        if self.by_occurrence and (info.op, 0) in self._at:  # an operator it profiled
            p = self._at.get((info.op, info.occurrence))
            if p is None:
                self._warn_unprofiled(info)
                return False  # recomputed: exact, and holds nothing
        elif p >= len(self.ops) or self.ops[p] != info.op:
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

    def _warn_unprofiled(self, info: PolicyInfo) -> None:
        if self._warned:
            return
        self._warned.append(info.op)
        warnings.warn(
            f"recompute(policy=OpPolicy): block {self.block!r} ran call #{info.occurrence} of "
            f"operator {info.op!r}, beyond the calls its profile has (its operators depend on "
            "the batch, as a mixture of experts' do); such calls are "
            "recomputed, which is exact, but the block may hold other bytes than the plan predicted. "
            "Warned once per policy", UserWarning, stacklevel=2)

    def __repr__(self) -> str:
        return (f"OpPolicy({self.block!r}: keep {len(self.keep)}, offload {len(self.offload)} "
                f"of {len(self.ops)} operators{', by occurrence' if self.by_occurrence else ''})")

    def to_dict(self) -> dict:
        return {"ops": list(self.ops), "keep": sorted(self.keep), "offload": sorted(self.offload),
                "block": self.block, "by_occurrence": self.by_occurrence}

    @classmethod
    def from_dict(cls, data: dict) -> OpPolicy:
        return cls(tuple(data["ops"]), frozenset(data["keep"]), frozenset(data["offload"]),
                   data.get("block", ""), data.get("by_occurrence", False))
