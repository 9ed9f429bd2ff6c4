"""The :class:`Plan` value (choices, predictions, printing) and :func:`apply_plan`, which wires it
into a model reversibly."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import asdict, dataclass, field

import paddle

from .._entry.routing import route_forward
from .apply_calls import call_forward
from .options import wrap_of
from .profile_result import Profile

_MiB = 1024 * 1024

__all__ = ["BlockChoice", "Plan", "AppliedPlan", "apply_plan"]

_RELATIVE = re.compile(r"^roots\[\d+\]\.?")
_MARK = "_paddle_recompute_plan_wrapped"


@dataclass(frozen=True)
class BlockChoice:
    """The option chosen for one block."""

    block: str
    kind: str
    option: str
    memory: int
    time: float
    targets: tuple[str, ...]
    call: int | None = None  # which call of the targets (None: every call)
    calls: int = 1  # calls of the targets per step
    span: tuple[int, int] | None = None  # children [a, b) of a Sequential target, one region


@dataclass
class Plan:
    """What to recompute, with the memory and time it predicts.

    ``predicted_bytes``: activation bytes saved for backward under the plan;
    ``baseline_bytes``: the same without recompute; ``extra_s``: predicted recompute
    seconds per step; ``forward_s``: the profiled forward time.
    """

    budget: int
    baseline_bytes: int
    predicted_bytes: int
    extra_s: float
    forward_s: float
    choices: list[BlockChoice]
    layers: dict = field(default_factory=dict, repr=False, compare=False)  # name -> Layer
    profile: Profile | None = field(default=None, repr=False, compare=False)
    _applied: list = field(default_factory=list, repr=False, compare=False)

    def apply(self, model: paddle.nn.Layer | None = None) -> AppliedPlan:
        """Wrap the chosen layers' forwards; see :func:`apply_plan`."""
        return apply_plan(model, self)

    def remove(self) -> None:
        """Undo every :meth:`apply` of this plan still in place, newest first."""
        while self._applied:
            self._applied[-1].remove()

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k not in ("layers", "profile", "_applied")}

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    def __str__(self) -> str:
        lines = [f"{'block':<20} {'option':<24} {'MiB held':>9} {'extra ms':>9}"]
        lines += [f"{c.block:<20} {c.option:<24} {c.memory / _MiB:>9.2f} {1e3 * c.time:>9.2f}"
                  for c in self.choices]
        lines.append(f"predicted {self.predicted_bytes / _MiB:.2f} MiB of {self.baseline_bytes / _MiB:.2f} "
                     f"MiB without recompute (budget {self.budget / _MiB:.2f} MiB); "
                     f"+{1e3 * self.extra_s:.2f} ms per step on a {1e3 * self.forward_s:.2f} ms forward")
        return "\n".join(lines)


class AppliedPlan:
    """Handle of an applied plan: ``remove()`` restores the wrapped forwards; also a
    context manager that removes on exit."""

    def __init__(self, plan: Plan, routings: list):
        self.plan = plan
        self.routings = routings  # one Routing per wrapped layer, in order

    def remove(self) -> None:
        """Restore the original forwards (idempotent)."""
        for routing in reversed(self.routings):
            routing.remove()
        self.routings = []
        if self in self.plan._applied:
            self.plan._applied.remove(self)

    def __enter__(self) -> AppliedPlan:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def apply_plan(model: paddle.nn.Layer | None, plan: Plan) -> AppliedPlan:
    """Make the layers the plan recomputes run their forward through recompute.

    Each target layer's ``forward`` is replaced on that instance by its option kind's wrap
    (non-reentrant :func:`~paddle_recompute.recompute` for ``full`` and ``sub``); forward
    hooks still run once, outside the recomputed region.

    Args:
        model: the model to change, looked up by the plan's layer names (so a plan made on
            one instance applies to an identical one); ``None``: the layers the plan was
            made on.
        plan: a :class:`Plan` from :func:`~paddle_recompute.planner.plan`.

    Returns:
        An :class:`AppliedPlan`; ``.remove()`` (or leaving its ``with`` block) undoes it.

    Raises:
        TypeError: ``plan`` is not a Plan or ``model`` not a Layer.
        ValueError: a planned layer is missing from ``model`` or already wrapped by a plan.

    Example:
        >>> import paddle, paddle_recompute as pr
        >>> def block():
        ...     return paddle.nn.Sequential(paddle.nn.Linear(8, 8), paddle.nn.Tanh(),
        ...                                 paddle.nn.Linear(8, 8), paddle.nn.Tanh())
        >>> model = paddle.nn.Sequential(*[block() for _ in range(3)])
        >>> x = paddle.randn([4, 8]); x.stop_gradient = False
        >>> handle = pr.planner.apply_plan(model, pr.planner.plan(model, x, budget=0.7))
        >>> model(x).sum().backward(); handle.remove()
    """
    if not isinstance(plan, Plan):
        raise TypeError(f"apply_plan: `plan` must be a Plan from paddle_recompute.planner.plan, got "
                        f"{type(plan).__name__}")
    targets = _targets(model, plan)
    by_layer: dict = {}
    for choice, name, layer in targets:
        if getattr(layer.__dict__.get("forward"), _MARK, False):
            raise ValueError(f"apply_plan: layer {name!r} is already wrapped by a plan; "
                             "remove that plan first")
        by_layer.setdefault(id(layer), (layer, []))[1].append(choice)
    routings: list = []
    for layer, choices in by_layer.values():
        routing = route_forward(layer, functools.partial(_routed, layer, choices))
        setattr(routing.forward, _MARK, True)
        routings.append(routing)
    handle = AppliedPlan(plan, routings)
    plan._applied.append(handle)
    return handle


def _routed(layer, choices: list, forward):
    """``layer``'s forward under the plan's ``choices`` for it (``_planner/apply_calls.py``)."""
    return call_forward(layer, forward, choices, _region)


def _region(choice: BlockChoice, forward):
    """``forward`` as the region ``choice`` makes (its kind's wrap)."""
    return wrap_of(choice.kind)(forward)


def _targets(model, plan) -> list:
    if model is not None and not isinstance(model, paddle.nn.Layer):
        raise TypeError(f"apply_plan: `model` must be a paddle.nn.Layer or None, got "
                        f"{type(model).__name__}")
    table = dict(model.named_sublayers(include_self=True)) if model is not None else plan.layers
    out = []
    for choice in plan.choices:
        if wrap_of(choice.kind) is None:
            continue
        for name in choice.targets:
            if name not in table and model is not None:
                name = _RELATIVE.sub("", name)  # plans made on a function: roots[k].<path>
            if name not in table:
                raise ValueError(f"apply_plan: the plan recomputes {name!r}, which the model "
                                 f"does not have (a plan applies to the model it was made for)")
            out.append((choice, name, table[name]))
    return out
