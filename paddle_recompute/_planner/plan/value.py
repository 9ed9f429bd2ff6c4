"""The :class:`Plan` value (choices, predictions, printing) and :func:`apply_plan`, which wires it
into a model reversibly."""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

import paddle

from ..._entry.routing import Applied, route_forward, routings_of
from ..options.apply_calls import Run, call_forward
from ..options.kinds import load_payload, wrap_of, wrapped_forward
from ..profile.files import check_structure, damaged, read_saved, structure_of, version_stamp
from ..profile.result import Profile

_MiB = 1024 * 1024

__all__ = ["BlockChoice", "Plan", "AppliedPlan", "apply_plan"]

_RELATIVE = re.compile(r"^roots\[\d+\]\.?")
_MARK = "_paddle_recompute_plan_wrapped"
_FORMAT = "paddle_recompute.plan/1"


@dataclass(frozen=True)
class BlockChoice:
    """The option chosen for one region (a block, or a call or run of the call tree);
    ``payload`` is what the kind's wrap is given (the ``ops`` kind's policy), ``types`` the
    class names of the targets (checked on apply).  ``call``, ``calls`` and ``span`` place
    a tree plan's region (``_planner/options/apply_calls.py``)."""

    block: str
    kind: str
    option: str
    memory: int
    time: float
    targets: tuple[str, ...]
    payload: Any = None
    types: tuple[str, ...] = ()
    call: int | None = None  # which call of the targets (None: every call)
    calls: int = 1  # calls of the targets per step
    span: tuple[int, int] | None = None  # children [a, b) of a Sequential target, one region
    # a run of calls (``span`` then places it in its caller): per target, (which call, calls
    # per step); see _planner/options/apply_calls.py
    members: tuple[tuple[int, int], ...] = ()

    def to_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["targets"], out["types"] = list(self.targets), list(self.types)
        out["payload"] = None if self.payload is None else self.payload.to_dict()
        out["span"] = None if self.span is None else list(self.span)
        out["members"] = [list(m) for m in self.members]
        return out

    @classmethod
    def from_dict(cls, data: dict) -> BlockChoice:
        """The inverse of :meth:`to_dict` (plans saved before ``call``/``calls``/``span``
        existed load as every-call choices)."""
        call, span = data.get("call"), data.get("span")
        return cls(data["block"], data["kind"], data["option"], int(data["memory"]),
                   float(data["time"]), tuple(data["targets"]),
                   payload=load_payload(data["kind"], data.get("payload")),
                   types=tuple(data.get("types", ())),
                   call=None if call is None else int(call), calls=int(data.get("calls", 1)),
                   span=None if span is None else (int(span[0]), int(span[1])),
                   members=tuple((int(k), int(n)) for k, n in data.get("members", ())))


@dataclass
class Plan:
    """What to recompute, with the memory and time it predicts.

    ``predicted_bytes``: activation bytes saved for backward under the plan;
    ``baseline_bytes``: the same without recompute; ``extra_s``: predicted recompute
    seconds per step; ``forward_s``: the profiled forward time; ``timings``: how long
    planning took and where (stage -> ``{"wall_s", "cpu_s"}``: ``profile``, ``record_ops``,
    ``measure_options``, ``solve``, ``final`` and ``total``; ``None`` on a plan made
    otherwise).
    """

    budget: int
    baseline_bytes: int
    predicted_bytes: int
    extra_s: float
    forward_s: float
    choices: list[BlockChoice]
    layers: dict = field(default_factory=dict, repr=False, compare=False)  # name -> Layer
    profile: Profile | None = field(default=None, repr=False, compare=False)
    # the model it was made for (NOTE [ Saved structure ] in profile/files.py)
    structure: dict | None = field(default=None, repr=False, compare=False)
    # where planning's time went: stage -> {"wall_s", "cpu_s"} (``plan/timings.py``)
    timings: dict | None = field(default=None, repr=False, compare=False)
    _applied: list = field(default_factory=list, repr=False, compare=False)

    def apply(self, model: paddle.nn.Layer | None = None) -> AppliedPlan:
        """Wrap the chosen layers' forwards; see :func:`apply_plan`."""
        return apply_plan(model, self)

    def remove(self) -> None:
        """Undo every :meth:`apply` of this plan still in place, newest first."""
        while self._applied:
            self._applied[-1].remove()

    def to_dict(self) -> dict:
        """Plain data (JSON-serialisable): the numbers and the choices, not the layers (nor
        ``timings``, which :meth:`save` writes beside them)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
               if f.name not in ("layers", "profile", "_applied", "choices", "timings")}
        out["choices"] = [c.to_dict() for c in self.choices]
        return out

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    def save(self, path: str | os.PathLike) -> None:
        """Write the plan to ``path`` as JSON; :meth:`load` reads it back.

        Example:
            >>> plan.save("plan.json")  # doctest: +SKIP
            >>> Plan.load("plan.json").apply(freshly_built_model)  # doctest: +SKIP
        """
        with open(path, "w") as fh:
            json.dump({"format": _FORMAT, **version_stamp(), **self.to_dict(),
                       "timings": self.timings}, fh, indent=1)

    @classmethod
    def load(cls, path: str | os.PathLike, model: paddle.nn.Layer | None = None) -> Plan:
        """A plan written by :meth:`save`.  It holds no layers: apply it with
        ``plan.apply(model)`` to a model built like the one it was made for.

        Args:
            path: the file.
            model: when given, the model it must belong to (checked now, as ``apply`` does).

        Raises:
            ValueError: the file is not JSON, is cut short, is not a saved plan (or one of
                another format version), is damaged, or (with ``model``) was made for a
                model of other layers or parameters: the first difference is named.
                Warns (``UserWarning``) when it was made with another Paddle version.
        """
        data = read_saved("Plan.load", path, _FORMAT, "Plan")
        fields = {f.name for f in dataclasses.fields(cls)} - {"layers", "profile", "_applied",
                                                              "choices", "structure",
                                                              "timings"}
        try:
            loaded = cls(**{k: data[k] for k in fields}, structure=data.get("structure"),
                         timings=data.get("timings"),
                         choices=[BlockChoice.from_dict(c) for c in data["choices"]])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise damaged("Plan.load", path, exc) from None
        if model is not None:
            _check_model("Plan.load", f"{os.fspath(path)!r}", loaded, model)
        return loaded

    def __str__(self) -> str:
        lines = [f"{'block':<20} {'option':<24} {'MiB held':>9} {'extra ms':>9}"]
        lines += [f"{c.block:<20} {c.option:<24} {c.memory / _MiB:>9.2f} {1e3 * c.time:>9.2f}"
                  for c in self.choices]
        lines.append(f"predicted {self.predicted_bytes / _MiB:.2f} MiB of {self.baseline_bytes / _MiB:.2f} "
                     f"MiB without recompute (budget {self.budget / _MiB:.2f} MiB); "
                     f"+{1e3 * self.extra_s:.2f} ms per step on a {1e3 * self.forward_s:.2f} ms forward")
        return "\n".join(lines)


class AppliedPlan(Applied):
    """The :class:`~paddle_recompute.planner.Applied` handle of an applied plan: ``remove()``
    restores the wrapped forwards and forgets the application in ``plan``; also a context
    manager that removes on exit."""

    def __init__(self, plan: Plan, routings: list):
        super().__init__(routings)  # one Routing per wrapped layer, in order
        self.plan = plan

    def remove(self) -> None:
        """Restore the original forwards (idempotent)."""
        super().remove()
        if self in self.plan._applied:
            self.plan._applied.remove(self)


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
        ValueError: a planned layer is missing from ``model`` or already wrapped by a plan;
            ``model`` differs from the model the plan was made for (a layer, a parameter's
            shape or dtype: the first difference is named).

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
    targets = _targets(model, plan)  # the planned layers first: their errors name them
    if model is not None:
        _check_model("apply_plan", "the plan", plan, model)
    by_layer: dict = {}
    for choice, name, layer in targets:
        if any(r.owner == _MARK for r in routings_of(layer)):
            raise ValueError(f"apply_plan: layer {name!r} is already wrapped by a plan; "
                             "remove that plan first")
        by_layer.setdefault(id(layer), (layer, []))[1].append(choice)
    members: dict = {}  # the plan's runs of calls (NOTE [ Runs of calls ])
    for choice, _, layer in targets:
        if choice.members:
            members.setdefault(id(choice), (choice, []))[1].append(layer)
    runs = {key: Run(choice, layers) for key, (choice, layers) in members.items()}
    routings: list = []
    for layer, choices in by_layer.values():
        routing = route_forward(layer, functools.partial(_routed, layer, choices, runs))
        routing.owner = _MARK
        routings.append(routing)
    handle = AppliedPlan(plan, routings)
    plan._applied.append(handle)
    return handle


def _check_model(api: str, source: str, plan: Plan, model) -> None:
    """The plan's structure against ``model``'s (NOTE [ Saved structure ]); plans made on a
    function (no root layer ``""``) are checked by their targets' types only."""
    if not isinstance(model, paddle.nn.Layer):
        raise TypeError(f"{api}: `model` must be a paddle.nn.Layer or None, got "
                        f"{type(model).__name__}")
    saved = plan.structure
    if saved is None or not any(name == "" for name, _ in saved.get("layers", ())):
        return
    here = structure_of({"": model, **dict(model.named_sublayers())})
    check_structure(api, source, saved, here)


def _routed(layer, choices: list, runs: dict, forward):
    """``layer``'s forward under the plan's ``choices`` for it (``_planner/options/apply_calls.py``)."""
    return call_forward(layer, forward, choices, _region, runs)


def _region(choice: BlockChoice, forward):
    """``forward`` as the region ``choice`` makes (its kind's wrap, given its payload)."""
    return wrapped_forward(choice.kind, forward, choice.payload)


def _targets(model, plan) -> list:
    if model is not None and not isinstance(model, paddle.nn.Layer):
        raise TypeError(f"apply_plan: `model` must be a paddle.nn.Layer or None, got "
                        f"{type(model).__name__}")
    if model is None and not plan.layers and any(c.targets for c in plan.choices):
        raise ValueError("apply_plan: this plan holds no layers (it was loaded from a file); "
                         "pass the model to apply it to: plan.apply(model)")
    table = dict(model.named_sublayers(include_self=True)) if model is not None else plan.layers
    out = []
    for choice in plan.choices:
        if wrap_of(choice.kind) is None:
            continue
        for k, name in enumerate(choice.targets):
            if name not in table and model is not None:
                name = _RELATIVE.sub("", name)  # plans made on a function: roots[k].<path>
            if name not in table:
                raise ValueError(f"apply_plan: the plan recomputes {name!r}, which the model "
                                 f"does not have (a plan applies to the model it was made for)")
            kind = type(table[name]).__name__
            if k < len(choice.types) and choice.types[k] != kind:
                raise ValueError(f"apply_plan: layer {name!r} is a {kind}, but the plan was made "
                                 f"for a {choice.types[k]} there; make a plan for this model")
            out.append((choice, name, table[name]))
    return out
