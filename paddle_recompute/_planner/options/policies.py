"""Planner options that are selective regions over whole blocks, with measured costs.

A policy's cost cannot be read off the profile: what a region keeps depends on outputs
nobody saves (a kept projection feeding a dropout) and on what its rerun can skip.  So
``plan`` measures each registered policy kind once per profile (``measure_options``): in
``ROUNDS`` interleaved rounds, a plain forward and backward of the profiled call and one
per policy with it applied to every block (random state and stateful buffers put back,
parameters' ``.grad`` untouched), reading from each block's region the device bytes it held
and the time its rerun took (``MeasuredFrame`` in ``options/policy_frame.py``), all by the
planner's clock (NOTE [ Planning clock ] in ``harness.py``: CPU time on the CPU).
A policy region also costs time in forward: every operator call passes through Python to
be numbered and shown to the policy.  So each block's forward is timed in both steps, and
an option's time is its rerun (median over the rounds) plus what a region's forward takes
beyond the block's plain forward, one figure per block over all its options and rounds
(NOTE [ Region forward ]).  The plain forward is the reference,
not the profile's rerun: a forward that keeps tensors pays for allocating them, as the
plain forward keeping them for backward does (PaddleFormers' Llama at hidden 512 on CPU: a
region keeping everything took ~150 ms more than the block's rerun, which keeps nothing,
and was priced so, while keeping without a region was priced at 0).  The results live in
``Profile.policy_costs`` and are reused.  With ``calibrate`` the time is replaced by
measured step growth, like every other option's.  ``plan`` measures blocks alike once, the
first of them alone on its captured call (NOTE [ Blocks measured alone ] in
``options/alike.py``): the "step" here is then that block's forward and backward.

Built in: ``policy:selective`` (``save_matmuls_except_scores_and_masks``, the
``"selective"`` preset) and ``policy:masks``
(``save_dropout_masks``: everything reruns but dropout's random draws).
"""

from __future__ import annotations

import functools
import statistics
import warnings
from collections.abc import Callable

from ..._core.amp import grad_enabled, set_grad_enabled
from ..._entry.routing import route_forwards
from ..._selective import policies
from ..harness import Session, clock, sync
from .kinds import recompute_forward, register_option
from .policy_frame import measured_regions
from .units import unit_rerun_s, unit_swaps

__all__ = ["register_policy_option", "measure_policies", "policy_wraps", "measure_options",
           "POLICY_KINDS", "ROUNDS"]

POLICY_KINDS: dict[str, Callable] = {}
ROUNDS = 2  # interleaved rounds measuring the region options (NOTE [ Region forward ])


def register_policy_option(kind: str, policy: Callable) -> None:
    """Offer ``plan`` a whole block under ``policy`` (non-reentrant), costs measured.

    Args:
        kind: the option kind's name, e.g. ``"policy:mine"``.
        policy: a selective recompute policy (see ``paddle_recompute.policies``).

    Raises:
        TypeError: ``kind`` is not a non-empty string or ``policy`` is not callable.

    Example:
        >>> import paddle_recompute as pr
        >>> pr.planner.register_policy_option("policy:matmuls", pr.policies.save_matmuls)
    """
    if not callable(policy):
        raise TypeError(f"register_policy_option: `policy` must be callable, got {policy!r}")
    register_option(kind, _provider(kind), _wrap(policy))  # validates `kind`
    POLICY_KINDS[kind] = policy


def _wrap(policy) -> Callable:
    return functools.partial(recompute_forward, policy=policy)


def _provider(kind: str):
    def provider(block, prof):
        cost = prof.policy_costs.get(block.name, {}).get(kind)
        if cost is None:  # the block's region never ran in the measurement, or failed
            return []
        held, seconds = cost
        return [(kind, block.input_bytes + held, seconds, (block.name,))]

    return provider


def measure_policies(session: Session, kinds) -> None:
    """Fill ``prof.policy_costs`` for the policy kinds among ``kinds`` not measured yet."""
    measure_options(session, policy_wraps(session.prof, kinds))


def policy_wraps(prof, kinds) -> dict:
    """The options ``measure_options`` takes (label -> {block: wrap}) for the policy kinds
    among ``kinds`` not measured yet (``plan`` measures them with the ``ops`` points, in the
    same rounds: one plain and one reference step a round for all)."""
    todo = [k for k in kinds if k in POLICY_KINDS
            and any(k not in prof.policy_costs.get(b, {}) for b in prof.blocks)]
    return {kind: {b: _wrap(POLICY_KINDS[kind]) for b in prof.blocks} for kind in todo}


def measure_options(session: Session, options: dict, rounds: int = ROUNDS) -> None:
    """Measure each option of ``options`` (label -> {block: wrap}) into
    ``prof.policy_costs[block][label]`` as (bytes held, seconds): ``rounds`` interleaved
    rounds, each a plain forward + backward (no region) and then, in rotating order, one per
    option with its wraps on the blocks (and one with every block a ``recompute_all`` region,
    the reference of the clock scale).  Seconds are the median over the rounds of the rerun
    plus what a region's forward takes beyond the block's plain forward (one figure per
    block, pooled over its options and rounds: NOTE [ Region forward ]), scaled to the
    profile's clock (``_scales``).  Both references are medians over the rounds, not the
    round's own sample: one step on a loaded machine is noise, and a reference sample in a
    round moved every option of that round with it (the GPT harness on CPU: one round's
    scale 1.1, the next's 1.56; a plain forward 0.29 to 0.36 s, where a region's own
    forward cost is a few milliseconds).  A forward that keeps tensors pays for their
    allocation as the plain one does: that is not the region's cost.  An
    option whose run fails is left out with a warning naming it, and recorded as failed
    (``None`` for each of its blocks): providers offer it nowhere, and a later plan on the
    profile does not run it again.  Nothing when the blocks
    have no trainable parameters (no backward, so no rerun to measure)."""
    prof = session.prof
    if not session.params or not options:
        return
    samples: dict = {label: {} for label in options}
    failed: list = []
    plains: dict = {}
    references: dict = {}
    units = list(dict.fromkeys(u for wraps in options.values() for u in wraps))
    grad = grad_enabled()
    try:
        set_grad_enabled(True)
        for r in range(rounds):
            if not samples:  # every option failed
                break
            for unit, seconds in _plain_forwards(session, units).items():
                plains.setdefault(unit, []).append(seconds)
            for unit, seconds in _reference_reruns(session, units).items():
                references.setdefault(unit, []).append(seconds)
            labels = list(samples)
            for label in labels[r % len(labels):] + labels[:r % len(labels)]:
                measured = _measured(session, options[label], label)
                if measured is None:
                    del samples[label]
                    failed.append(label)
                    continue
                for block, calls in measured.items():
                    samples[label].setdefault(block, []).append(calls)
    finally:
        set_grad_enabled(grad)
    for label in failed:
        for block in options[label]:
            prof.policy_costs.setdefault(block, {})[label] = None
    scale = _scales(prof, references)
    extra = _forward_extras(samples, plains)
    for label, per_block in samples.items():
        for block, rounds_ in per_block.items():
            rerun = statistics.median(sum(r for _, r, _ in calls) for calls in rounds_)
            cost = (max(h for calls in rounds_ for h, _, _ in calls),
                    (rerun + extra.get(block, 0.0)) * scale.get(block, 1.0))
            prof.policy_costs.setdefault(block, {})[label] = cost


def _forward_extras(samples: dict, plains: dict) -> dict:
    """Unit -> what a region's forward takes beyond the unit's plain forward: the median,
    over every option and round, of its forward less the median plain one, at least 0.

    One figure per unit, not per option (NOTE [ Region forward ])."""
    plain = {unit: statistics.median(v) for unit, v in plains.items()}
    extras: dict = {}
    for per_block in samples.values():
        for block, rounds_ in per_block.items():
            if block in plain:
                extras.setdefault(block, []).extend(
                    sum(f for _, _, f in calls) - plain[block] for calls in rounds_)
    return {block: max(statistics.median(v), 0.0) for block, v in extras.items()}


# NOTE [ Region forward ]: a region's forward costs beyond the plain one what its hooks do
# per operator (number it, ask the policy), the same for every policy on a unit.  It is
# small against a forward of hundreds of milliseconds (pooled as below: 0 and 10 ms in two
# plans of the Llama that follows), and a per-option estimate (its forward
# less the plain one, three rounds) is the difference of two noisy steps: on PaddleFormers'
# Llama at hidden 512 on CPU a decoder layer's forward took 350 +- 40 ms, and per-option
# extras of 0 to 100 ms moved ``ops:3`` from 84 to 188 ms between two plans of the same
# model, whose reruns measured 64-87 ms in both, and reordered the points (``ops:1``
# priced above ``ops:0``).  Pooled over every option and round of the unit (9 options x
# ``ROUNDS`` there), the options' order is their reruns' order, and two rounds price them
# as steadily as three: ``ops:3`` at 84, 86 and 70 ms and ``ops:4`` at 47, 45 and 30 ms in
# three fresh plans (three rounds, pooled: 113, 90 and 99 ms; 62, 41 and 41 ms; per
# option: 188, 84, 96 and 90 ms; 134, 37, 31 and 35 ms), at two thirds of the steps.


def _reference_reruns(session, units) -> dict:
    """Unit -> its rerun's seconds in a ``recompute_all`` region (one step, every unit one)."""
    wraps = dict.fromkeys(units, _wrap(policies.recompute_all))
    measured = _measured(session, wraps, "policy:recompute_all (reference)") or {}
    return {block: sum(r for _, r, _ in calls) for block, calls in measured.items()}


def _scales(prof, references: dict) -> dict:
    """Unit -> its profiled rerun over the median of its reference reruns.

    A rerun in backward takes longer than the profile's (on PaddleFormers' Llama at hidden
    512 on CPU about 1.5x: it allocates what it saves, where the profile's rerun discards
    it, and the machine's load drifts between the profile and the rounds), and ``full`` and
    ``sub`` are priced at the profile's; measured region options are scaled to that clock
    by a region rerunning everything, timed in every round."""
    out = {}
    for block, reruns in references.items():
        rerun, profiled = statistics.median(reruns), unit_rerun_s(prof, block)
        if rerun > 0 and profiled:
            out[block] = profiled / rerun
    return out


def _measured(session: Session, wraps: dict, label: str) -> dict | None:
    try:
        return _measure(session, wraps)
    except Exception as exc:  # noqa: BLE001  (the option is dropped, and said so)
        warnings.warn(f"plan: option {label!r} left out: running the blocks under its policy "
                      f"failed ({type(exc).__name__}: {exc})", stacklevel=4)
        return None


def _plain_forwards(session, units) -> dict:
    """Unit (a block, or one call: NOTE [ Operator units ]) -> seconds its forwards took in
    one plain forward + backward (no region)."""
    seconds: dict = {}

    def timed(name):
        def wrap(forward):
            def run(*args, **kwargs):
                sync()
                start = clock()
                out = forward(*args, **kwargs)
                sync()
                seconds[name] = seconds.get(name, 0.0) + clock() - start
                return out

            return run

        return wrap

    with route_forwards(unit_swaps(session.table, session.prof, {u: timed(u) for u in units})):
        session.step()
    return seconds


def _measure(session: Session, wraps: dict) -> dict:
    """One forward + backward with ``wraps[unit]`` on each unit (a block, or one call:
    NOTE [ Operator units ]): unit -> [(bytes held, rerun seconds, forward seconds)]."""
    owners: list = []

    def tracked(name, wrap):
        def wrap_tracked(forward):
            region = wrap(forward)

            def run(*args, **kwargs):
                before = len(finished)
                sync()
                start = clock()
                out = region(*args, **kwargs)
                sync()
                seconds = clock() - start
                if len(finished) > before:  # regions nested in this one end before it
                    owners.append((name, finished[-1], seconds))
                return out

            return run

        return wrap_tracked

    with measured_regions() as finished, route_forwards(unit_swaps(
            session.table, session.prof, {name: tracked(name, wrap) for name, wrap in wraps.items()})):
        session.step()
    out: dict = {}
    for name, frame, seconds in owners:
        out.setdefault(name, []).append((frame.held_bytes(), frame.rerun_ns / 1e9, seconds))
    finished.clear()  # each frame is in the list it holds: a cycle keeping its kept tensors
    return out


register_policy_option("policy:selective", policies.save_matmuls_except_scores_and_masks)
register_policy_option("policy:masks", policies.save_dropout_masks)
