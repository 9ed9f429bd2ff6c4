"""Wire a :class:`~paddle_recompute.Plan` into a model, reversibly."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import paddle

from ._plan_options import wrap_of

if TYPE_CHECKING:
    from ._plan import Plan

__all__ = ["apply_plan", "AppliedPlan"]

_RELATIVE = re.compile(r"^roots\[\d+\]\.?")
_MARK = "_paddle_recompute_plan_wrapped"


class AppliedPlan:
    """Handle of an applied plan: ``remove()`` restores the wrapped forwards; also a
    context manager that removes on exit."""

    def __init__(self, plan: Plan, swaps: list):
        self.plan = plan
        self.swaps = swaps  # (layer, instance forward before, or None)

    def remove(self) -> None:
        """Restore the original forwards (idempotent)."""
        for layer, previous in reversed(self.swaps):
            if previous is None:
                del layer.forward
            else:
                layer.forward = previous
        self.swaps = []
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
        plan: a :class:`Plan` from :func:`~paddle_recompute.plan`.

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
        >>> handle = pr.apply_plan(model, pr.plan(model, x, budget=0.7))
        >>> model(x).sum().backward(); handle.remove()
    """
    from ._plan import Plan

    if not isinstance(plan, Plan):
        raise TypeError(f"apply_plan: `plan` must be a Plan from paddle_recompute.plan, got "
                        f"{type(plan).__name__}")
    targets = _targets(model, plan)
    swaps: list = []
    for _kind, name, layer in targets:
        if getattr(layer.__dict__.get("forward"), _MARK, False):
            raise ValueError(f"apply_plan: layer {name!r} is already wrapped by a plan; "
                             "remove that plan first")
    for kind, _name, layer in targets:
        previous = layer.__dict__.get("forward")
        wrapped = wrap_of(kind)(layer.forward)
        setattr(wrapped, _MARK, True)
        layer.forward = wrapped
        swaps.append((layer, previous))
    handle = AppliedPlan(plan, swaps)
    plan._applied.append(handle)
    return handle


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
            out.append((choice.kind, name, table[name]))
    return out
