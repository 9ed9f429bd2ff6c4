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

    (budget - fixed_bytes - working_bytes) // in_flight - buffer_bytes

with ``fixed_bytes`` what the stage holds whatever the micro-batches (parameters,
gradients, optimizer state) and ``working_bytes`` the backward's working memory (NOTE [
Backward working memory ] in ``working.py``): gradient temporaries, and a recomputed
region's rerun while its backward runs.  It comes once, not per micro-batch in flight: a
stage runs one backward at a time.  The plan is then the single-model plan at that budget.

NOTE [ Working memory reserve ]: the working memory depends on the plan (a rerun adds a
region's activations to it), and the plan on the working memory (through the share).
``plan_stage`` starts from the working memory measured without recompute, plans at the
share it leaves, then measures one micro-batch's forward and backward with the plan
applied: what the forward leaves allocated (``held``) and the peak beyond it.  The step
fits when ``in_flight * (input_bytes + held) + working <= budget - fixed_bytes``, the
1F1B peak: the other micro-batches in flight hold their inputs and activations while one
runs its backward.  If it does not fit, the reserve grows by the excess and the stage is
planned again (the profile is reused).  The reserve only grows and the share only
shrinks, so the rounds end in a plan that fits, in ``InfeasibleBudget`` once the share is
below what the stage can hold, or after ``_ROUNDS`` plans in an error naming the numbers.
What is checked is measured, not predicted: held bytes the profile leaves out (allocator
rounding, tensors saved without the hooks) count too.  On the two-rank test
(tests/interop/test_pipeline_plan.py) the first stage's peak was 159,744 to 188,416 bytes
over three runs (the plan varies with measured times) of a 221,232-byte room, 262,144
without recompute.
"""

from __future__ import annotations

import functools
import inspect
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import paddle

from ..._core.errors import RecomputeError
from ..._core.layers import find_roots
from ..._core.state import ForwardState
from ..profile.measure import nbytes_of
from ..profile.measure import profile as run_profile
from .make import plan
from .value import Plan
from .working import measure_working

__all__ = ["SCHEDULES", "in_flight", "stage_budget", "plan_stage"]

SCHEDULES = ("1F1B", "FThenB")
_ROUNDS = 6  # plans tried at growing reserves (NOTE [ Working memory reserve ])
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
                 micro_batches: int, schedule: str = "1F1B", working_bytes: int = 0) -> int:
    """Bytes one micro-batch's saved activations may take on stage ``stage``:
    ``(budget - fixed_bytes - working_bytes) // in_flight - buffer_bytes`` (NOTE [ Micro-batches
    in flight ]).

    Raises:
        TypeError: a budget or byte count that is not an int.
        ValueError: bad stage counts, or a budget that leaves nothing for activations.
    """
    _bytes(budget=budget, fixed_bytes=fixed_bytes, buffer_bytes=buffer_bytes,
           working_bytes=working_bytes)
    count = in_flight(stage, stages, micro_batches, schedule)
    per_batch = (budget - fixed_bytes - working_bytes) // count - buffer_bytes
    if per_batch < 0:
        working = (f" plus the backward's working memory ({working_bytes:,})"
                   if working_bytes else "")
        raise ValueError(
            f"{_API}: `budget` {budget:,} bytes leaves nothing for stage {stage}'s activations: "
            f"its fixed memory (`fixed_bytes`, {fixed_bytes:,}){working} plus {count} "
            f"micro-batch(es) in flight times their input and output buffers ({buffer_bytes:,} "
            f"bytes each) need {fixed_bytes + working_bytes + count * buffer_bytes:,}; raise "
            f"the budget, use fewer micro-batches or more stages")
    return per_batch


def plan_stage(model_or_fn: Callable[..., Any], *sample_inputs: Any, stage: int, stages: int,
               micro_batches: int, budget: int, fixed_bytes: int | None = None,
               working_bytes: int | None = None, schedule: str = "1F1B",
               **plan_options: Any) -> Plan:
    """Plan one pipeline stage so that its allocator peak over a training step fits ``budget``.

    Each rank calls it for its own stage (a ``PipelineLayer`` holds only its stage's layers).
    The stage's share of activations per micro-batch is ``(budget - fixed_bytes -
    working_bytes) // in_flight - buffer_bytes`` (NOTE [ Micro-batches in flight ]), and the
    plan is :func:`plan`'s at that share.  Stage ``i`` of ``p`` holds ``min(p - i, m)``
    micro-batches under 1F1B, so earlier stages get tighter plans.  ``working_bytes`` is
    measured (NOTE [ Backward working memory ]): first without recompute, then with the plan
    applied, whose reruns add to it.  The measured step (the micro-batches in flight, each
    its inputs and what its forward left allocated, plus one backward's peak) must fit
    ``budget - fixed_bytes``; while it does not, the excess is reserved too and the stage
    planned again (NOTE [ Working memory reserve ]).

    Args:
        model_or_fn: the stage (a ``PipelineLayer``, which runs this rank's layers), or a
            function running it; on the last stage, a function that adds the loss counts
            the loss's saved tensors and its backward too.
        *sample_inputs: one micro-batch's inputs of the stage (on later stages, tensors
            shaped like what the stage before sends, ``stop_gradient=False`` where they
            take gradients).
        stage: this stage's index, ``0 <= stage < stages``.
        stages: the number of pipeline stages.
        micro_batches: micro-batches per step (the accumulate steps).
        budget: the device budget in bytes, the same for every stage.
        fixed_bytes: what the stage holds whatever the micro-batches, taken out of
            ``budget`` before it is shared.  Default: its parameters and the gradients of
            those that take one.  With an optimizer that keeps state (Adam's two moments
            per parameter), pass the bytes allocated before a training step instead.
        working_bytes: what the backward allocates beyond what the forward holds, taken
            out of ``budget`` too.  Default: measured on the allocator, with the plan
            applied (on the CPU, Paddle's host allocator statistics; where a process keeps
            none, ``FLAGS_enable_host_memory_stat=1`` before Paddle's import turns them on).
            Given, it is used as it is and nothing is measured.
        schedule: ``"1F1B"`` (default) or ``"FThenB"``.
        **plan_options: as in :func:`plan` (``options``, ``regions``, ``final_rounds``...),
            and the call's keyword arguments.

    Returns:
        A :class:`Plan` whose ``budget`` is the per-micro-batch activation budget.

    Raises:
        TypeError / ValueError: bad stage counts, a stage index out of range, a budget that
            is not bytes or that does not cover the fixed memory, the working memory and
            the buffers (the argument is named).
        InfeasibleBudget: the per-micro-batch budget is below the least the stage can hold.
        RecomputeError: ``working_bytes`` not given and the allocator keeps no statistics,
            or no plan's measured step fit after a few rounds (the numbers are named).

    Example:
        >>> plan = planner.plan_stage(pipeline_layer, (hidden, mask), stage=hcg.get_stage_id(),
        ...                           stages=2, micro_batches=4, budget=2 << 30)  # doctest: +SKIP
        >>> plan.apply()  # doctest: +SKIP
    """
    count = in_flight(stage, stages, micro_batches, schedule)  # checked before any work
    _bytes(budget=budget, fixed_bytes=0 if fixed_bytes is None else fixed_bytes,
           working_bytes=0 if working_bytes is None else working_bytes)
    kwargs = {k: v for k, v in plan_options.items() if k not in _PLAN_PARAMETERS}
    roots = find_roots(model_or_fn, sample_inputs, kwargs)
    if fixed_bytes is None:
        fixed_bytes = _parameters_and_gradients(roots)
    inputs, buffers = _buffer_bytes(model_or_fn, sample_inputs, kwargs, roots)
    split = functools.partial(stage_budget, budget, fixed_bytes, buffers, stage=stage,
                              stages=stages, micro_batches=micro_batches, schedule=schedule)
    split(working_bytes=working_bytes or 0)  # the plain split fails before any profiling
    if working_bytes is not None:
        return plan(model_or_fn, *sample_inputs, budget=split(working_bytes=working_bytes),
                    **plan_options)
    fits = _Fit(room=budget - fixed_bytes, in_flight=count, input_bytes=inputs)
    return _reserved((model_or_fn, sample_inputs, kwargs), roots, split, fits, plan_options)


@dataclass(frozen=True)
class _Fit:
    """What a stage's step must fit: ``in_flight`` micro-batches, each its inputs plus what
    its forward leaves allocated, and one backward's working memory, in ``room`` bytes."""

    room: int
    in_flight: int
    input_bytes: int

    def over(self, held: int, working: int) -> int:
        """Bytes by which the measured step exceeds the room (<= 0: it fits)."""
        return self.in_flight * (self.input_bytes + held) + working - self.room


def _reserved(call: tuple, roots: tuple, split, fits: _Fit, plan_options: dict) -> Plan:
    """The plan at the share left after a reserve for the backward (NOTE [ Working memory
    reserve ]), checked against the measured step."""
    params = list({id(p): p for layer in roots for p in layer.parameters()
                   if not p.stop_gradient}.values())
    model_or_fn, sample_inputs, kwargs = call
    options = dict(plan_options)
    if options.get("profile") is None:
        options["profile"] = run_profile(model_or_fn, *sample_inputs,
                                         blocks=options.get("blocks"), **kwargs)
    plain = measure_working(_API, call, roots, params)
    reserve = plain[1]
    for _ in range(_ROUNDS):
        chosen = plan(model_or_fn, *sample_inputs, budget=split(working_bytes=reserve), **options)
        measured = plain
        if any(c.kind != "keep" for c in chosen.choices):
            with chosen.apply():
                measured = measure_working(_API, call, roots, params)
        over = fits.over(*measured)
        if over <= 0:
            return chosen
        reserve += over
    raise RecomputeError(
        f"{_API}: no plan fit the budget after {_ROUNDS} rounds: the last one's measured step "
        f"({measured[0]:,} bytes held per micro-batch beyond its {fits.input_bytes:,} bytes of "
        f"inputs, {measured[1]:,} bytes of working memory) exceeded the {fits.room:,} bytes "
        f"left by the fixed memory by {over:,}; raise the budget, or pass `working_bytes=` to "
        f"plan with a reserve of your own")


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


def _buffer_bytes(model_or_fn, sample_inputs: tuple, kwargs: dict, roots: tuple) -> tuple:
    """Bytes of one micro-batch's inputs, and of its inputs and output (each tensor once):
    the pipeline keeps them until its backward.  One forward without gradients, state put
    back.  A stage may pass an input on as it is (a mask): the pipeline then frees that
    object once sent, and each region reruns from its own alias of it (NOTE [ Inputs as
    aliases ] in ``_core/identity.py``)."""
    with ForwardState(True, roots).replayed(_API), paddle.no_grad():
        output = model_or_fn(*sample_inputs, **kwargs)
    alive = {p.data_ptr() for layer in roots for p in layer.parameters()}.__contains__
    return (nbytes_of((sample_inputs, kwargs), alive),
            nbytes_of((sample_inputs, kwargs, output), alive))
