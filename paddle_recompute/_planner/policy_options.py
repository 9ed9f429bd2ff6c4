"""Planner options that are selective regions over whole blocks, with measured costs.

A policy's cost cannot be read off the profile: what a region keeps depends on outputs
nobody saves (a kept projection feeding a dropout) and on what its rerun can skip.  So
``plan`` measures each registered policy kind once per profile: it applies the policy to
every block, runs one forward and backward of the profiled call (random state and
stateful buffers put back, parameters' ``.grad`` untouched), and reads from each block's
region the device bytes it held and the time its rerun took (``MeasuredFrame`` in
``policy_frame.py``).
A policy region also costs time in forward: every operator call passes through Python to
be numbered and shown to the policy, and on a model of many small operators that costs
more than the rerun saves (PaddleFormers' Llama at hidden 128 on CPU: the ``"selective"``
preset took longer than recomputing whole blocks).  So the same pass times each region's
forward, and an option's time is its rerun plus what that forward took beyond the block's
plain run (its profiled recompute time, a forward with nothing observed).  The results
live in ``Profile.policy_costs`` and are reused.  With ``calibrate`` the time
is replaced by measured step growth, like every other option's.

Built in: ``policy:selective`` (``save_matmuls_except_scores_and_masks``, the
``"selective"`` preset) and ``policy:masks``
(``save_dropout_masks``: everything reruns but dropout's random draws).
"""

from __future__ import annotations

import functools
import statistics
import time
import warnings
from collections.abc import Callable

from .._core.amp import grad_enabled, set_grad_enabled
from .._selective import policies
from .calibrate import Wrapped, step, trainable_params
from .options import recompute_forward, register_option
from .policy_frame import measured_regions
from .profile import sync

__all__ = ["register_policy_option", "measure_policies", "measure_regions", "costs_of", "POLICY_KINDS"]

POLICY_KINDS: dict[str, Callable] = {}


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
        if cost is None:  # the block's region never ran in the measurement
            return []
        held, seconds = cost
        return [(kind, block.input_bytes + held, seconds, (block.name,))]

    return provider


def measure_policies(call, table: dict, roots: tuple, prof, kinds) -> None:
    """Fill ``prof.policy_costs`` for the policy kinds among ``kinds`` not measured yet."""
    todo = [k for k in kinds if k in POLICY_KINDS
            and any(k not in prof.policy_costs.get(b, {}) for b in prof.blocks)]
    if not todo:
        return
    params = trainable_params(table)
    if not params:  # nothing to backpropagate to, so no rerun to measure: offer no policy
        return
    wrap = {kind: _wrap(POLICY_KINDS[kind]) for kind in todo}
    for kind in todo:
        measured = measure_regions(call, table, roots, params, {b: wrap[kind] for b in prof.blocks},
                                   f"option {kind!r}")
        for block, cost in costs_of(measured, prof).items():
            prof.policy_costs.setdefault(block, {})[kind] = cost


def costs_of(measured: dict, prof) -> dict:
    """Per block, (bytes held, seconds) from :func:`measure_regions`' samples: the most held,
    and the median rerun plus what the observed forward took beyond the block's plain run."""
    out = {}
    for block, samples in measured.items():
        held = max(h for h, _, _ in samples)
        rerun = statistics.median(r for _, r, _ in samples)
        plain = prof.layers[block].recompute_s or 0.0  # the profile's unobserved rerun
        forward = statistics.median(f for _, _, f in samples) - plain
        out[block] = (held, rerun + max(forward, 0.0))
    return out


def measure_regions(call, table, roots, params, wraps: dict, what: str) -> dict:
    """One forward + backward with ``wraps[block]`` on each block (policy regions):
    block -> [(bytes held, rerun seconds, forward seconds)]; ``{}`` with a warning naming
    ``what`` when the run fails (the option is left out)."""
    grad = grad_enabled()
    try:
        set_grad_enabled(True)
        return _measure(call, table, roots, params, wraps)
    except Exception as exc:  # noqa: BLE001  (the option is dropped, and said so)
        warnings.warn(f"plan: {what} left out: running the blocks under its policy failed "
                      f"({type(exc).__name__}: {exc})", stacklevel=4)
        return {}
    finally:
        set_grad_enabled(grad)


def _measure(call, table, roots, params, wraps: dict) -> dict:
    """One forward + backward with ``wraps[block]`` on each block:
    block -> [(bytes held, rerun seconds, forward seconds)]."""
    owners: list = []

    def tracked(name, wrap):
        def wrap_tracked(forward):
            region = wrap(forward)

            def run(*args, **kwargs):
                before = len(finished)
                sync()
                start = time.perf_counter()
                out = region(*args, **kwargs)
                sync()
                seconds = time.perf_counter() - start
                if len(finished) > before:  # regions nested in this one end before it
                    owners.append((name, finished[-1], seconds))
                return out

            return run

        return wrap_tracked

    with measured_regions() as finished, Wrapped([(table[name], tracked(name, wrap))
                                                  for name, wrap in wraps.items()]):
        step(call, roots, params)
    out: dict = {}
    for name, frame, seconds in owners:
        out.setdefault(name, []).append((frame.held_bytes(), frame.rerun_ns / 1e9, seconds))
    return out


register_policy_option("policy:selective", policies.save_matmuls_except_scores_and_masks)
register_policy_option("policy:masks", policies.save_dropout_masks)
