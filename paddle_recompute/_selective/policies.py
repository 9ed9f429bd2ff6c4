"""The policy predicates, factories and combinators (public as :mod:`paddle_recompute.policies`,
whose docstring explains what a policy is and answers)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from .fused_ops import FUSED_OPS, fused_kind

__all__ = [
    "ELEMENTWISE_OPS", "MATMUL_OPS", "OFFLOAD", "RECOMPUTE", "SAVE", "Offload", "PolicyInfo",
    "offload", "recompute_all", "save_all", "save_all_but_attention_core", "save_any_of",
    "save_dropout_masks", "save_matmuls", "save_matmuls_except_scores",
    "save_matmuls_except_scores_and_masks", "save_matmuls_no_batch", "save_names", "Policy",
    "SaveNames", "SaveAnyOf", "Offloading", "names_of", "keeps_everything", "answer_of",
]


class Offload:
    """Policy answer: keep the tensor, on the host until backward."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "policies.OFFLOAD"


SAVE = True
RECOMPUTE = False
OFFLOAD = Offload()

# Operators with a weight-sized contraction: expensive to recompute per byte kept (with the
# fused kernels of kind "matmul": NOTE [ Fused operators ] in fused_ops.py).
MATMUL_OPS = frozenset({
    "matmul", "linear", "bmm", "mm", "mv", "addmm", "einsum",
    "conv1d", "conv2d", "conv3d", "depthwise_conv2d", "conv2d_transpose", "conv3d_transpose",
    "depthwise_conv2d_transpose",
}) | frozenset(name for name, op in FUSED_OPS.items() if op.kind == "matmul")
# Attention core beside its batched matmuls (Megatron's "core attention"), and the fused
# kernels of kinds "attention_core" and "softmax".
_ATTENTION_CORE_OPS = frozenset({"softmax", "softmax_", "dropout", "dropout_"}) | frozenset(
    name for name, op in FUSED_OPS.items() if op.kind in ("attention_core", "softmax"))
# Fused kernels whose output is scores·V: kept where scores·V is.
_FUSED_ATTENTION = frozenset(name for name, op in FUSED_OPS.items() if op.kind == "attention_core")
# The kernels Tensor operators run (NOTE [ Tensor operators ]): memory-bound, so the cheapest
# bytes to recompute; in attention they scale and mask the scores.
ELEMENTWISE_OPS = frozenset({
    "add", "subtract", "multiply", "divide", "scale", "div_scale", "pow", "elementwise_pow",
    "remainder",
    "floor_divide", "getitem",
})


class PolicyInfo:
    """What a policy knows about one operator output (read-only; fields computed on access).

    Attributes:
        op: the operator that produced the tensor (``paddle._C_ops`` name: ``"linear"``,
            ``"matmul"``, ``"softmax"`` ...; ``"unknown"`` for a tensor named with
            :func:`paddle_recompute.tag` whose producer was not observed).
        name: the name given with ``paddle_recompute.tag(tensor, name)``, else ``None``.
        output_index: position of the tensor among the operator's tensor outputs.
        shape: the tensor's shape, a tuple of ints.
        dtype: the tensor's dtype (a ``paddle`` dtype).
        nbytes: bytes of the tensor's data.
        input_shapes: shapes of the operator's tensor inputs, in call order (``()`` for
            ``"unknown"``).
        position: the operator's number in the region's forward, from 0 (``None`` when
            the question comes from ``tag``).
        occurrence: the operator's number among the region's calls of the same operator
            (the third ``"linear"`` is 2), from 0 (``None`` when the question comes from ``tag``).
    """

    __slots__ = ("op", "name", "output_index", "input_shapes", "position", "occurrence", "_tensor")

    def __init__(self, op: str, name: str | None, output_index: int, tensor, input_shapes: tuple,
                 position: int | None = None, occurrence: int | None = None):
        self.op = op
        self.name = name
        self.output_index = output_index
        self.input_shapes = input_shapes
        self.position = position
        self.occurrence = occurrence
        self._tensor = tensor

    @property
    def shape(self) -> tuple:
        return tuple(self._tensor.shape)

    @property
    def dtype(self):
        return self._tensor.dtype

    @property
    def nbytes(self) -> int:
        return self._tensor.size * self._tensor.element_size()

    def __repr__(self) -> str:
        return (f"PolicyInfo(op={self.op!r}, name={self.name!r}, output_index={self.output_index}, "
                f"shape={self.shape}, dtype={self.dtype}, nbytes={self.nbytes})")


Policy = Callable[[PolicyInfo], "bool | Offload"]


def _is_batched_matmul(info: PolicyInfo) -> bool:
    if info.op not in MATMUL_OPS or info.op == "linear" or info.op.startswith(("conv", "depthwise")):
        return False
    shapes = info.input_shapes
    return len(shapes) >= 2 and all(len(s) >= 3 for s in shapes)


def save_matmuls(info: PolicyInfo) -> bool:
    """Keep matmul/linear/conv/bmm/einsum outputs: the FLOPs live there, the bytes elsewhere.

    A fused attention kernel (``flash_attn``...) is kept too: its output is scores·V.
    """
    return info.op in MATMUL_OPS or info.op in _FUSED_ATTENTION


def save_matmuls_no_batch(info: PolicyInfo) -> bool:
    """Keep weight matmuls only (JAX's dots_with_no_batch_dims): attention scores are large but cheap."""
    return info.op in MATMUL_OPS and not _is_batched_matmul(info)


def save_matmuls_except_scores(info: PolicyInfo) -> bool:
    """Keep matmul outputs except those of batched matmuls that expand (attention scores).

    Weight matmuls (linear, conv, and matmuls with a 2-D operand) are kept.  A batched
    matmul between activations is kept when its output is no larger than its largest input
    (scores·V), and recomputed when it is larger (Q·Kᵀ: sequence² elements for a
    contraction of only head_dim, the cheapest bytes a transformer holds per FLOP).
    With :func:`save_dropout_masks` it is the transformer policy that recomputes least per
    byte freed: :func:`save_matmuls_except_scores_and_masks`.
    """
    if info.op in _FUSED_ATTENTION:
        return True  # its output is scores·V, the size of V
    if info.op not in MATMUL_OPS:
        return False
    if not _is_batched_matmul(info):
        return True
    return math.prod(info.shape) <= max(math.prod(s) for s in info.input_shapes)


def save_dropout_masks(info: PolicyInfo) -> bool:
    """Keep dropout masks (1 byte an element): rebuilding the output beats redrawing the numbers.

    Combine it: ``save_any_of(save_matmuls_no_batch, save_dropout_masks)``.  Needs the region
    to preserve RNG state (the default); a mask is kept only where a rebuild was checked
    bit-identical with this device's kernel, else dropout reruns.
    """
    return info.op == "dropout" and info.output_index == 1


def save_matmuls_except_scores_and_masks(info: PolicyInfo):
    """:func:`save_matmuls_except_scores` or :func:`save_dropout_masks`: the ``"selective"``
    transformer preset and the planner's ``policy:selective`` option."""
    return save_matmuls_except_scores(info) or save_dropout_masks(info)


def save_all_but_attention_core(info: PolicyInfo) -> bool:
    """Recompute only scores, softmax, dropout and scores·V (Megatron's selective recompute).

    With them the elementwise arithmetic (:data:`ELEMENTWISE_OPS`: ``x * scale``,
    ``scores + mask``, RoPE's products, indexing) reruns too: keeping it would hold the
    scaled and masked scores, which no backward needs, and it is the cheapest work to redo.
    Fused kernels answer by kind: attention kernels (``flash_attn``...), the masked softmax
    and elementwise ones (RoPE, dropout plus residual) rerun; norms, activations and matmuls
    are kept (NOTE [ Fused operators ] in ``fused_ops.py``).
    """
    return (info.op not in _ATTENTION_CORE_OPS and info.op not in ELEMENTWISE_OPS
            and fused_kind(info.op) != "elementwise" and not _is_batched_matmul(info))


def recompute_all(info: PolicyInfo) -> bool:
    """Keep nothing: the same memory as a plain region, with operator observation (a baseline)."""
    return False


def save_all(info: PolicyInfo) -> bool:
    """Keep everything: backward reruns only random ops (a baseline for the skip machinery)."""
    return True


@dataclass(frozen=True)
class SaveNames:
    """Policy value of :func:`save_names`: keep the tensors tagged with one of ``names``."""

    names: frozenset

    def __call__(self, info: PolicyInfo) -> bool:
        return info.name in self.names

    def __repr__(self) -> str:
        return f"policies.save_names({', '.join(map(repr, sorted(self.names)))})"


@dataclass(frozen=True)
class SaveAnyOf:
    """Policy value of :func:`save_any_of`: the first non-false answer of ``policies``."""

    policies: tuple

    def __call__(self, info: PolicyInfo):
        for p in self.policies:
            answer = answer_of(p, info)
            if answer:
                return answer
        return False

    @property
    def names(self) -> frozenset:
        return frozenset().union(*(names_of(p) for p in self.policies))

    def __repr__(self) -> str:
        return f"policies.save_any_of({', '.join(map(_policy_repr, self.policies))})"


@dataclass(frozen=True)
class Offloading:
    """Policy value of :func:`offload`: what ``policy`` keeps goes to the host."""

    policy: Callable

    def __call__(self, info: PolicyInfo):
        return OFFLOAD if answer_of(self.policy, info) else False

    @property
    def names(self) -> frozenset:
        return names_of(self.policy)

    def __repr__(self) -> str:
        return f"policies.offload({_policy_repr(self.policy)})"


def answer_of(policy, info: PolicyInfo):
    """``policy(info)``, which must be True (keep), False (recompute) or ``OFFLOAD``.

    Raises:
        TypeError: the policy returned anything else (a string, None, a tensor): a truthy
            one would otherwise be taken as "keep" without a word.
    """
    answer = policy(info)
    if type(answer) is bool or isinstance(answer, Offload):
        return answer
    raise TypeError(
        f"recompute(policy=...): the policy {_policy_repr(policy)} returned {_short(answer)} "
        f"(a {type(answer).__name__}) for output {info.output_index} of operator '{info.op}'; "
        f"a policy must return True (keep), False (recompute) or policies.OFFLOAD. "
        f"Fix: return a bool, e.g. bool(...) of the condition")


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def keeps_everything(policy) -> bool:
    """Whether ``policy`` keeps every operator output (``save_all``, or ``save_any_of`` with
    it): its region lets go of the outputs no rerun can need (NOTE [ Kept outputs let go ])."""
    if isinstance(policy, SaveAnyOf):
        return any(keeps_everything(p) for p in policy.policies)
    return policy is save_all


def names_of(policy) -> frozenset:
    """The tag names a policy keeps by (empty for operator-based ones): a region reports
    them when none was tagged."""
    if isinstance(policy, (SaveNames, SaveAnyOf, Offloading)):
        return policy.names
    return frozenset()


def _policy_repr(policy) -> str:
    """``policies.save_matmuls`` for the built-in predicates, else the policy's own repr."""
    name = getattr(policy, "__name__", None)
    if name is not None and globals().get(name) is policy:
        return f"policies.{name}"
    return repr(policy)


def save_names(*names: str) -> Policy:
    """Keep the tensors named with ``paddle_recompute.tag``: the user knows what is costly.

    A region using it (alone or combined) raises ``RecomputeError`` after its forward when
    none of ``names`` was tagged there (a typo or a missing ``tag`` call).

    Raises:
        TypeError: a name is not a string.
        ValueError: no names given.
    """
    if not names:
        raise ValueError("policies.save_names: give at least one name, e.g. save_names('qkv')")
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"policies.save_names: names must be strings, got {n!r}")
    return SaveNames(frozenset(names))


def save_any_of(*policies: Policy) -> Policy:
    """OR of policies (first non-false answer wins): combine op-based and name-based choices.

    Raises:
        TypeError: a policy is not callable.
    """
    for p in policies:
        if not callable(p):
            raise TypeError(f"policies.save_any_of: every policy must be callable, got {p!r}")
    return SaveAnyOf(tuple(policies))


def offload(policy: Policy) -> Policy:
    """What ``policy`` keeps goes to the host instead: device memory of recompute, time of save.

    Raises:
        TypeError: ``policy`` is not callable.
    """
    if not callable(policy):
        raise TypeError(f"policies.offload: `policy` must be callable, got {policy!r}")
    return Offloading(policy)
