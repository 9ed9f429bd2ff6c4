"""``plan_stage``: the plan of one pipeline stage under the one device budget all stages share.

NOTE [ Micro-batches in flight ]: under pipeline parallelism a stage runs the forward of
micro-batch ``k`` before the backward of earlier ones, so it holds the activations of
several micro-batches at once, and how many depends on the schedule and the stage.  With
``p`` stages and ``m`` micro-batches, Paddle's 1F1B (``PipelineParallel``'s
``forward_backward_pipeline``) runs on stage ``i`` (0-based) ``min(p - i - 1, m)`` warm-up
forwards, then alternates one forward and one backward, then drains the rest::

    p = 2, m = 4     time ->
    stage 0:  F0 F1 .. B0 F2 B1 F3 B2 .. B3        holds F0, F1 before B0: 2 in flight
    stage 1:     F0 B0 F1 B1 F2 B2 F3 B3           holds F0 before B0: 1 in flight

so just before its first backward stage ``i`` holds ``min(p - i, m)`` micro-batches, its
most: every later forward follows a backward that freed one.  Stage 0 holds the most and
the last stage one.  Under ``FThenB`` (GPipe: every forward, then every backward) each
stage holds all ``m``.  Other schedules (interleaved virtual stages) are not modelled.

What a stage holds for a micro-batch in flight is its plan's saved tensors plus the
pipeline's buffers of it: the stage's input (received from the stage before, or the
micro-batch itself on stage 0) and its output (kept until the backward of that
micro-batch).  The profile leaves inputs out (alive anyway for one call, not so across
micro-batches), so ``plan_stage`` counts them here.  The budget of one micro-batch's
activations is therefore::

    (budget - fixed_bytes) // in_flight - buffer_bytes

with ``fixed_bytes`` what the stage holds whatever the micro-batches (parameters,
gradients, optimizer state).  The plan is then the single-model plan at that budget: a
plan bounds what is held after the forward, like ``plan``'s.  The backward's own working
memory (gradient temporaries) and a recomputed region's activations while its backward
runs come on top, once, not per micro-batch in flight: whoever wants the allocator's peak
bounded adds headroom for them to ``fixed_bytes`` (the working memory measured without
recompute, plus at most one micro-batch's activations without recompute for a rerun).  On
the two-rank test (tests/interop/test_pipeline_plan.py) that headroom put the first
stage's peak at 225,280 bytes of a 295,092-byte room, with the share of the micro-batches
in flight 55,322 bytes each.
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Callable
from typing import Any

import paddle

from ..._core.layers import find_roots
from ..._core.state import ForwardState
from ..profile.measure import nbytes_of
from .make import plan
from .value import Plan

__all__ = ["SCHEDULES", "in_flight", "stage_budget", "plan_stage"]

SCHEDULES = ("1F1B", "FThenB")
_API = "plan_stage"
# plan's own keywords; any other keyword is the call's
_PLAN_PARAMETERS = frozenset(name for name, p in inspect.signature(plan).parameters.items()
                             if p.kind is p.KEYWORD_ONLY)


def in_flight(stage: int, stages: int, micro_batches: int, schedule: str = "1F1B") -> int:
    """How many micro-batches stage ``stage`` of ``stages`` holds at most (NOTE [ Micro-batches
    in flight ]).

    Raises:
        ValueError: a count below 1, a stage outside ``[0, stages)``, an unknown schedule.
    """
    _check(stage, stages, micro_batches, schedule)
    return micro_batches if schedule == "FThenB" else min(stages - stage, micro_batches)


def stage_budget(budget: int, fixed_bytes: int, buffer_bytes: int, *, stage: int, stages: int,
                 micro_batches: int, schedule: str = "1F1B") -> int:
    """Bytes one micro-batch's saved activations may take on stage ``stage``:
    ``(budget - fixed_bytes) // in_flight - buffer_bytes`` (NOTE [ Micro-batches in flight ]).

    Raises:
        TypeError: a budget or byte count that is not an int.
        ValueError: bad stage counts, or a budget that leaves nothing for activations.
    """
    _bytes(budget=budget, fixed_bytes=fixed_bytes, buffer_bytes=buffer_bytes)
    count = in_flight(stage, stages, micro_batches, schedule)
    per_batch = (budget - fixed_bytes) // count - buffer_bytes
    if per_batch < 0:
        raise ValueError(
            f"{_API}: `budget` {budget:,} bytes leaves nothing for stage {stage}'s activations: "
            f"its fixed memory (`fixed_bytes`, {fixed_bytes:,}) plus {count} micro-batch(es) in "
            f"flight times their input and output buffers ({buffer_bytes:,} bytes each) need "
            f"{fixed_bytes + count * buffer_bytes:,}; raise the budget, use fewer "
            f"micro-batches or more stages")
    return per_batch


def plan_stage(model_or_fn: Callable[..., Any], *sample_inputs: Any, stage: int, stages: int,
               micro_batches: int, budget: int, fixed_bytes: int | None = None,
               schedule: str = "1F1B", **plan_options: Any) -> Plan:
    """Plan one pipeline stage so that, with its micro-batches in flight, it fits ``budget``.

    Each rank calls it for its own stage (a ``PipelineLayer`` holds only its stage's layers):
    the stage's share of activations per micro-batch is ``(budget - fixed_bytes) //
    in_flight - buffer_bytes`` (NOTE [ Micro-batches in flight ]), and the plan is
    :func:`plan`'s at that budget.  Stage ``i`` of ``p`` holds ``min(p - i, m)``
    micro-batches under 1F1B, so earlier stages get tighter plans.

    Args:
        model_or_fn: the stage (a ``PipelineLayer``, which runs this rank's layers), or a
            function running it; on the last stage, a function that adds the loss counts
            the loss's saved tensors too.
        *sample_inputs: one micro-batch's inputs of the stage (on later stages, tensors
            shaped like what the stage before sends, ``stop_gradient=False`` where they
            take gradients).
        stage: this stage's index, ``0 <= stage < stages``.
        stages: the number of pipeline stages.
        micro_batches: micro-batches per step (the accumulate steps).
        budget: the device budget in bytes, the same for every stage.
        fixed_bytes: what the stage holds whatever the micro-batches, taken out of
            ``budget`` before it is shared.  Default: its parameters and the gradients of
            those that take one.  Pass the bytes allocated before a step to count
            optimizer state, plus headroom for the backward to bound the allocator's peak
            (NOTE [ Micro-batches in flight ]).
        schedule: ``"1F1B"`` (default) or ``"FThenB"``.
        **plan_options: as in :func:`plan` (``options``, ``regions``, ``final_rounds``...),
            and the call's keyword arguments.

    Returns:
        A :class:`Plan` whose ``budget`` is the per-micro-batch activation budget.

    Raises:
        TypeError / ValueError: bad stage counts, a stage index out of range, a budget that
            is not bytes or that does not cover the fixed memory and the buffers (the
            argument is named).
        InfeasibleBudget: the per-micro-batch budget is below the least the stage can hold.

    Example:
        >>> plan = planner.plan_stage(pipeline_layer, (hidden, mask), stage=hcg.get_stage_id(),
        ...                           stages=2, micro_batches=4, budget=2 << 30)  # doctest: +SKIP
        >>> plan.apply()  # doctest: +SKIP
    """
    in_flight(stage, stages, micro_batches, schedule)  # checked before any work
    _bytes(budget=budget, fixed_bytes=0 if fixed_bytes is None else fixed_bytes)
    roots = find_roots(model_or_fn, sample_inputs, {})
    if fixed_bytes is None:
        fixed_bytes = _parameters_and_gradients(roots)
    buffers = _buffer_bytes(model_or_fn, sample_inputs, plan_options, roots)
    per_batch = stage_budget(budget, fixed_bytes, buffers, stage=stage, stages=stages,
                             micro_batches=micro_batches, schedule=schedule)
    return plan(model_or_fn, *sample_inputs, budget=per_batch, **plan_options)


def _check(stage, stages, micro_batches, schedule) -> None:
    for name, value in (("stages", stages), ("micro_batches", micro_batches)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"{_API}: `{name}` must be an int >= 1, got {value!r}")
    if isinstance(stage, bool) or not isinstance(stage, numbers.Integral) or not 0 <= stage < stages:
        raise ValueError(f"{_API}: `stage` must be an int in [0, {stages}) for stages={stages} "
                         f"(0 is the first stage), got {stage!r}")
    if schedule not in SCHEDULES:
        raise ValueError(f"{_API}: `schedule` must be one of {list(SCHEDULES)} (interleaved "
                         f"virtual stages are not modelled), got {schedule!r}")


def _bytes(**values) -> None:
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
            raise TypeError(f"{_API}: `{name}` must be bytes, an int >= 0, got {value!r}"
                            + (" (a fraction of no recompute is not a device budget)"
                               if name == "budget" and isinstance(value, float) else ""))


def _parameters_and_gradients(roots: tuple) -> int:
    """Bytes of the parameters, and of the gradients of those that take one."""
    params = {id(p): p for layer in roots for p in layer.parameters()}.values()
    return sum(p.size * p.element_size() * (1 if p.stop_gradient else 2) for p in params)


def _buffer_bytes(model_or_fn, sample_inputs: tuple, plan_options: dict, roots: tuple) -> int:
    """Bytes of one micro-batch's input and output (each tensor once): the pipeline keeps
    them until its backward.  One forward without gradients, state put back."""
    kwargs = {k: v for k, v in plan_options.items() if k not in _PLAN_PARAMETERS}
    with ForwardState(True, roots).replayed(_API), paddle.no_grad():
        output = model_or_fn(*sample_inputs, **kwargs)
    alive = {p.data_ptr() for layer in roots for p in layer.parameters()}
    return nbytes_of((sample_inputs, kwargs, output), alive.__contains__)
