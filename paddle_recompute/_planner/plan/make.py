"""``plan``: choose what to recompute under a memory budget; ``apply_plan`` wires it in.

The predicted activation memory of a plan is the profile's bytes saved outside the blocks
plus, per block, the chosen option's bytes (NOTE [ Planner model ] in
``_planner/solvers/blocks.py``); the budget bounds that sum.  Held memory measured after a forward
also contains the forward's outputs and allocator rounding, which the prediction leaves out.

NOTE [ Two region sources ]: ``regions="blocks"`` is not a constraint on the tree planner
(the tree with only the blocks' calls allowed as regions) but a pipeline of its own, because
the two price and solve differently and the block pipeline's plans are part of the API's
behaviour: blocks alike (type, saved and input bytes) share the median time of their
options (``_pooled``), an option may be a sublayer of the block (``sub``: in the tree a
region of its own, a choice of the child, not of the block), block times may be calibrated
into step growth (``calibrate``), a region's own cost (``Profile.region_s``) is not added,
the inputs regions around several blocks share are credited by re-solving (``_solve``),
and the greedy solver is offered.  Restricting the tree would change each of these, and so
the plans ``regions="blocks"`` returns; the two share the measured options, the shortlist
and the final measured choice instead.
"""

from __future__ import annotations

import numbers
import statistics
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import paddle

from ..._core.layers import find_roots
from ..harness import Session
from ..options.alike import alike_blocks, measure_alike
from ..options.calibrate import calibrated
from ..options.kinds import candidates_for, option_kinds, wrap_of
from ..options.ops import KIND as OPS
from ..options.ops import ops_wraps
from ..options.policies import policy_wraps
from ..options.region_overhead import measure_region_overhead
from ..profile.blocks import layer_table
from ..profile.files import check_structure, structure_of
from ..profile.measure import profile_calls as run_profile
from ..profile.result import Profile
from ..solvers.blocks import BLOCK_SOLVERS, InfeasibleBudget, Option
from .final_choice import ROUNDS as FINAL_ROUNDS
from .final_choice import kind_subsets, measure_final, shortlist, uniform_choices, worth_timing
from .scaled import without_measurements
from .shared_inputs import solve_credited
from .timings import Timings
from .value import BlockChoice, Plan

__all__ = ["plan", "budget_bytes"]

_MiB = 1024 * 1024


def budget_bytes(api: str, budget: Any, baseline: int) -> int:
    """``budget`` as bytes: an int is bytes, a float in (0, 1] a fraction of ``baseline``.

    Raises:
        TypeError: ``budget`` is not a number.
        ValueError: a fraction outside (0, 1] or bytes below 0.
    """
    if isinstance(budget, bool) or not isinstance(budget, numbers.Real):
        raise TypeError(f"{api}: `budget` must be bytes (int) or a fraction of the no-recompute "
                        f"activation memory (float in (0, 1]), got {budget!r}")
    if isinstance(budget, numbers.Integral):
        if budget < 0:
            raise ValueError(f"{api}: `budget` in bytes must be >= 0, got {budget}")
        return int(budget)
    if not 0 < budget <= 1:
        raise ValueError(f"{api}: a float `budget` is a fraction of the no-recompute activation "
                         f"memory and must be in (0, 1], got {budget}; pass bytes as an int")
    return int(budget * baseline)


def plan(
    model_or_fn: Callable[..., Any],
    *sample_inputs: Any,
    budget: int | float,
    blocks: Sequence[paddle.nn.Layer | str] | None = None,
    options: Sequence[str] | None = None,
    solver: str = "exact",
    profile: Profile | None = None,
    calibrate: int = 0,
    regions: str | None = None,
    final_rounds: int = FINAL_ROUNDS,
    **kwargs: Any,
) -> Plan:
    """Choose, per block, how to recompute so activations fit ``budget`` at the least time.

    Profiles ``model_or_fn(*sample_inputs, **kwargs)`` (see :func:`profile`), builds each
    block's candidate options (``keep``, ``full``, ``sub``, the policy kinds
    ``policy:selective`` and ``policy:masks``, the operator-level ``ops``, and any
    registered kind), and solves the multiple-choice knapsack exactly.  For ``ops`` every
    block's operators are recorded over three forwards and each distinct block's keep /
    recompute / offload frontier is solved (``_planner/options/ops.py``); with
    ``regions="tree"`` also those of the few large calls and runs of calls where it can pay
    (NOTE [ Operator units ] in ``_planner/options/units.py``), each call of a shared layer on
    its own.  Policy kinds and
    the offered ``ops`` points are measured first, in the same three interleaved rounds: a
    plain step, a reference step and one forward and backward per option with it on every
    block (see ``_planner/options/policies.py``).  Last, the few best plans
    that fit (the solver's, the solver's over fewer kinds, each option on every block: a
    preset or policy as a whole-model choice) are measured over ``final_rounds``
    interleaved rounds, by what differs between them: each distinct configuration of a
    block alike to others, forward and backward on one such block alone (whole steps only
    for plans that differ outside blocks); the best-predicted is returned unless the
    measured fastest also beats it in a duel of fresh paired rounds, by a sign test (NOTE
    [ Final measurement ] in ``_planner/plan/final_choice.py``: at most 4 plans; the cost
    does not grow with the number of blocks alike).

    Args:
        model_or_fn: the model, or a function running it (e.g. forward plus loss, so the
            loss's saved tensors count toward the budget).
        *sample_inputs: inputs of a representative step.
        budget: bytes (int), or a fraction (float in (0, 1]) of the activation bytes
            saved without recompute.
        blocks: as in :func:`profile`.
        options: option kinds to consider (default: every registered kind).
        solver: ``"exact"`` (default), ``"greedy"`` or ``"brute_force"``.
        profile: reuse a :class:`Profile` of the same call instead of profiling again
            (one from :meth:`Profile.load` too); it must have been made on a model of the
            same layers and parameters, with inputs of the same shapes and dtypes.
        regions: where regions come from.  ``"tree"`` (the default without ``blocks``):
            any call of any sublayer at any depth (each call of a shared layer on its own)
            and any run of two or more calls each taking the one before's output straight
            (a ``Sequential``'s children, a ``LayerList`` looped over; NOTE [ Runs of
            calls ] in ``_planner/options/apply_calls.py``), chosen by an exact
            dynamic program over the call tree (NOTE [ Region tree ]).  ``"blocks"`` (the
            default with ``blocks``): one option per block (NOTE [ Planner model ]).
        calibrate: rounds of calibration (0: off; ``regions="blocks"`` only).  Each
            option's time becomes the measured growth of a forward + backward with it
            applied (see ``_planner/options/calibrate.py``): slower to plan (one forward +
            backward per option and round), closer to what the step pays.  Stored in the profile and reused.
        **kwargs: keyword arguments of the call.

    Returns:
        A :class:`Plan`; ``plan.apply()`` wires it in.

    Raises:
        TypeError / ValueError: a bad ``budget``, ``options``, ``solver`` or ``final_rounds``;
            a ``profile`` made on another model or other input shapes (the first difference
            is named).
        InfeasibleBudget (a ValueError): the budget is below the least achievable memory,
            which the message names.
        ValueError: no Layer is reachable from ``model_or_fn`` (so no region to choose).

    Example:
        >>> import paddle, paddle_recompute as pr
        >>> def block():
        ...     return paddle.nn.Sequential(paddle.nn.Linear(64, 64), paddle.nn.Tanh(),
        ...                                 paddle.nn.Linear(64, 64), paddle.nn.Tanh())
        >>> model = paddle.nn.Sequential(*[block() for _ in range(4)])
        >>> x = paddle.randn([32, 64]); x.stop_gradient = False
        >>> p = pr.planner.plan(model, x, budget=0.6)
        >>> with p.apply():
        ...     model(x).sum().backward()
    """
    timings = Timings()
    regions = _regions(regions, blocks, solver, calibrate)
    _rounds("final_rounds", final_rounds)
    kinds = _kinds(options)
    budget_bytes("plan", budget, 1)  # type and range checks before the (slow) profile
    roots = find_roots(model_or_fn, sample_inputs, kwargs)
    layers = layer_table(model_or_fn, roots, blocks)
    _check_reached(model_or_fn, layers)
    if profile is not None:  # one made on this model and these input shapes, or an error
        check_structure("plan", "the profile given", profile.structure,
                        structure_of(layers, (sample_inputs, kwargs)))
    with timings.stage("profile"):
        prof, captured = ((profile, None) if profile is not None else
                          run_profile(model_or_fn, sample_inputs, kwargs, blocks))
    budget = budget_bytes("plan", budget, prof.total_bytes)
    kinds, final_rounds = without_measurements(prof, kinds, final_rounds)  # a scaled profile
    session = Session((model_or_fn, sample_inputs, kwargs), layers, roots, prof)
    table = session.table
    # the policy kinds and the ``ops`` points in the same rounds (one plain step and one
    # reference step a round for all of them)
    with timings.stage("record_ops"):
        todo = policy_wraps(prof, kinds)
        # blocks alike, measured once and alone (NOTE [ Blocks measured alone ] in
        # options/alike.py): one forward captures them, when there is anything to measure
        alike = (alike_blocks(session, captured) if todo or (OPS in kinds and not prof.op_profiles)
                 else {})
        ops = ops_wraps(session, kinds, calls=regions == "tree", budget=budget, alike=alike)
    with timings.stage("measure_options"):
        if ops and not alike:  # a new budget point on a profile measured before
            alike = alike_blocks(session, captured)
        measure_alike(session, {**todo, **ops}, alike)
        if regions == "tree":
            if not alike and prof.region_s is None:  # timed in a block alone where there is one
                alike = alike_blocks(session, captured)
            measure_region_overhead(session, alike)
    if regions == "tree":
        with timings.stage("solve"):
            plans = _tree_plans(prof, table, kinds, budget, solver, final_rounds)
    else:
        cands = _pooled([candidates_for(b, prof, kinds) for b in prof.block_profiles()], prof)
        for b, c in zip(prof.blocks, cands, strict=True):
            if not c:
                raise ValueError(f"plan: block {b!r} has no candidate option among kinds {kinds}")
        if calibrate:
            with timings.stage("measure_options"):
                cands = calibrated(session, cands, calibrate)
        with timings.stage("solve"):
            plans = _block_plans(prof, table, cands, budget, solver, kinds, final_rounds)
    with timings.stage("final"):
        short = worth_timing(shortlist(plans, budget)) if final_rounds else plans[:1]
        if len(short) > 1 and not alike:  # blocks timed alone
            alike = alike_blocks(session)
        chosen = measure_final(session, short, final_rounds, alike=alike)[0]
    chosen.structure = prof.structure
    chosen.timings = timings.as_dict()
    return chosen


def _block_plans(prof: Profile, table: dict, cands: list, budget: int, solver: str, kinds,
                 final_rounds: int) -> list[Plan]:
    """The solver's plan, then (with a final measurement) the alternatives to measure
    against it (NOTE [ Final measurement ])."""
    chosen, sol = _solve(prof, cands, budget, solver)
    plans = [_block_plan(prof, table, budget, chosen, sol.memory, sol.time)]
    if not final_rounds:
        return plans
    for subset in kind_subsets(kinds)[1:]:
        some = [[c for c in cs if c.kind in subset] for cs in cands]
        if all(some):
            try:
                chosen, sol = _solve(prof, some, budget, solver)
            except InfeasibleBudget:
                continue
            plans.append(_block_plan(prof, table, budget, chosen, sol.memory, sol.time))
    for picked in uniform_choices(cands):
        plans.append(_block_plan(prof, table, budget, picked, sum(c.memory for c in picked),
                                 sum(c.time for c in picked)))
    return plans


def _block_plan(prof: Profile, table: dict, budget: int, chosen: list, memory: float,
                seconds: float) -> Plan:
    return Plan(budget=budget, baseline_bytes=prof.total_bytes,
                predicted_bytes=prof.outside_bytes + int(memory) - _credit(prof, chosen),
                extra_s=seconds,
                forward_s=prof.forward_s, profile=prof,
                layers={t: table[t] for c in chosen for t in c.targets},
                choices=[BlockChoice(b, c.kind, c.name, c.memory, c.time, c.targets,
                                     payload=c.payload,
                                     types=tuple(type(table[t]).__name__ for t in c.targets))
                         for b, c in zip(prof.blocks, chosen, strict=True)])


def _rounds(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"plan: `{name}` must be an int >= 0 (rounds), got {value!r}")


def _check_reached(model_or_fn, layers: dict) -> None:
    """Regions are calls of layers: a function that reaches none has nothing to plan."""
    if not layers:
        name = getattr(model_or_fn, "__qualname__", type(model_or_fn).__name__)
        raise ValueError(
            f"plan: no paddle.nn.Layer is reachable from `model_or_fn` ({name}), so there is "
            "no layer call to recompute. Layers are found as the function itself, its "
            "arguments, its closure, the module globals it reads and the attributes of an "
            "object it is a method of, not through a module attribute (`mymodule.model`) or "
            "an attribute of an attribute. Pass the model itself, pass it as an argument or "
            "in a functools.partial(fn, model), or name the layers with blocks=[...]."
        )


def _regions(regions, blocks, solver: str, calibrate) -> str:
    """Check the options that depend on where regions come from; the resolved ``regions``."""
    if regions is None:
        regions = "tree" if blocks is None else "blocks"
    if regions not in ("tree", "blocks"):
        raise ValueError(f"plan: `regions` must be 'tree' (any call of any sublayer, runs of a "
                         f"Sequential) or 'blocks' (one option per block), got {regions!r}")
    solvers = ("exact", "brute_force") if regions == "tree" else tuple(BLOCK_SOLVERS)
    if solver not in solvers:
        raise ValueError(f"plan: with regions={regions!r}, `solver` must be one of "
                         f"{sorted(solvers)}, got {solver!r}")
    _rounds("calibrate", calibrate)
    if calibrate and regions == "tree":
        raise ValueError("plan: `calibrate` prices block options; pass regions='blocks' (and "
                         "blocks=..., or let them be detected) to calibrate")
    return regions


def _tree_plans(prof: Profile, table: dict, kinds, budget: int, solver: str,
                final_rounds: int) -> list[Plan]:
    """The tree solver's plan, then (with a final measurement) its plans over fewer kinds."""
    plans = [_tree_plan(prof, table, kinds, budget, solver)]
    for subset in kind_subsets(kinds)[1:] if final_rounds else ():
        try:
            plans.append(_tree_plan(prof, table, subset, budget, solver))
        except InfeasibleBudget:
            continue
    return plans


def _tree_plan(prof: Profile, table: dict, kinds, budget: int, solver: str) -> Plan:
    try:
        choices, memory, seconds = solve_credited(prof, kinds, budget, solver)
    except InfeasibleBudget as exc:
        raise InfeasibleBudget(budget, exc.minimum, note=_share(exc.minimum, prof)) from None
    return Plan(budget=budget, baseline_bytes=prof.total_bytes, predicted_bytes=int(memory),
                extra_s=seconds, forward_s=prof.forward_s, profile=prof,
                layers={t: table[t] for c in choices for t in c.targets}, choices=choices)


def _share(least: float, prof: Profile) -> str:
    return (f" ({least / max(prof.total_bytes, 1):.3f} of the {prof.total_bytes:,} bytes saved "
            "without recompute)")


def _solve(prof: Profile, cands: list, budget: int, solver: str) -> tuple:
    """The chosen candidate per block and the solver's Solution (blocks get what is left
    of the budget after the bytes saved outside them, and the credit of the inputs they
    share: NOTE [ Shared block inputs ] in ``profile/measure.py``)."""
    numbers_only = [[Option(c.name, c.memory, c.time) for c in cs] for cs in cands]
    block_budget = budget - prof.outside_bytes
    try:
        sol = BLOCK_SOLVERS[solver](numbers_only, block_budget)
    except InfeasibleBudget as exc:
        least = exc.minimum + prof.outside_bytes
        raise InfeasibleBudget(budget, least, note=_share(least, prof)) from None
    chosen = [cs[i] for cs, i in zip(cands, sol.choice, strict=True)]
    for _ in range(3):
        credit = _credit(prof, chosen)
        if not credit:
            break
        wider = BLOCK_SOLVERS[solver](numbers_only, block_budget + credit)
        picked = [cs[i] for cs, i in zip(cands, wider.choice, strict=True)]
        if (wider.choice == sol.choice or wider.time > sol.time
                or wider.memory - _credit(prof, picked) > block_budget):
            break
        chosen, sol = picked, wider
    return chosen, sol


def _credit(prof: Profile, chosen: list) -> int:
    """Bytes of inputs shared by blocks that regions around several of the ``chosen`` hold
    once but their options count each (NOTE [ Shared block inputs ] in ``profile/measure.py``)."""
    return prof.shared_input_credit(c.targets[0] for c in chosen if len(c.targets) == 1
                                    and c.targets[0] in prof.layers and prof.layers[c.targets[0]].is_block)


def _pooled(cands: list, prof: Profile) -> list:
    """Blocks alike (type, saved and input bytes) get the median time of their alike
    candidates: one timing per block is noisy, and noise would make the solver pick
    different options for identical blocks."""
    sigs = [(b.type, b.saved_bytes, b.input_bytes) for b in prof.block_profiles()]
    times: dict = {}
    for sig, cs in zip(sigs, cands, strict=True):
        for c in cs:
            times.setdefault((sig, c.name, c.memory), []).append(c.time)
    return [[replace(c, time=statistics.median(times[(sig, c.name, c.memory)])) for c in cs]
            for sig, cs in zip(sigs, cands, strict=True)]


def _kinds(options) -> tuple[str, ...]:
    if options is None:
        return option_kinds()
    if isinstance(options, str) or not isinstance(options, Sequence) or not options:
        raise TypeError(f"plan: `options` must be a non-empty list of option kinds "
                        f"{option_kinds()}, got {options!r}")
    for kind in options:
        wrap_of(kind)
    return tuple(options)
