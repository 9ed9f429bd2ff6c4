"""The plan's last step: of the few best plans that fit, the one measured fastest.

NOTE [ Final measurement ]: the solver ranks plans by predicted time, and predictions of
region options are measured reruns scaled to the profile's clock (``policy_options.py``),
so two plans a few percent apart in prediction can swap places in a real step
(PaddleFormers' Llama, 4 layers, hidden 512, at 0.5 on CPU: the solver's mix of ``ops``
points predicted cheaper than the ``"selective"`` policy on every block, which held less
and ran faster).  So ``plan`` ends by measuring.  The shortlist (``shortlist``) is every
distinct plan that fits the budget among:

  * the solver's plan over all the kinds asked for;
  * the solver's plan over ``keep``, ``full`` and each one other kind (a policy alone, the
    ``ops`` points alone, ...), and over every kind but ``ops``;
  * each option on every block (a preset or policy as a whole-model choice: the
    ``policy:selective`` option on every block is the ``"selective"`` preset);

ordered by predicted time, at most ``CANDIDATES`` of them.  With two or more, each is
applied in turn and one forward + backward of the profiled call timed
(``calibrate.step``: state put back, parameters' ``.grad`` untouched), ``rounds`` rounds
interleaved in rotating order after one warm-up step each; the plan with the least median
time relative to the solver's plan in the same round wins (the load of a shared machine
drifts between rounds; the ratio cancels it).  Times are by the planner's clock: CPU
time on the CPU, the wall clock on an accelerator (NOTE [ Planning clock ] in
``profile.py``).  Fitting is by
prediction: a plan the solver's model says exceeds the budget is never measured.  Cost: ``(rounds + 1) x
candidates`` steps (defaults 3 and 4: 16 steps, on the Llama above ~40 s against minutes
of pricing the options).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

from .._core.amp import grad_enabled, set_grad_enabled
from .calibrate import step, trainable_params
from .plan_value import Plan

__all__ = ["shortlist", "uniform_choices", "kind_subsets", "measure_final", "ROUNDS", "CANDIDATES"]

ROUNDS = 3
CANDIDATES = 4


def kind_subsets(kinds) -> list[tuple[str, ...]]:
    """The kind sets the solver is run on: all, all but ``ops``, and ``keep`` + ``full``
    with each other kind."""
    base = tuple(k for k in ("keep", "full") if k in kinds)
    out = [tuple(kinds), tuple(k for k in kinds if k != "ops")]
    out += [base + (k,) for k in kinds if k not in base]
    return [s for i, s in enumerate(out) if s and s not in out[:i]]


def uniform_choices(cands: list) -> list[list]:
    """Per option name offered on every block, that option on every block."""
    names = [c.name for c in cands[0]] if cands else []
    out = []
    for name in names:
        picked = [next((c for c in cs if c.name == name), None) for cs in cands]
        if all(c is not None for c in picked):
            out.append(picked)
    return out


def shortlist(plans: list[Plan], limit: int, n: int = CANDIDATES) -> list[Plan]:
    """Distinct plans (by their choices) that fit ``limit``, by predicted time, at most ``n``;
    the first of ``plans`` (the solver's) always stays."""
    seen, out = set(), []
    first, rest = plans[0], sorted(plans[1:], key=lambda p: p.extra_s)
    for p in [first, *rest]:
        key = tuple((c.block, c.option, c.call, c.span) for c in p.choices)
        if key in seen or p.predicted_bytes > limit:
            continue
        seen.add(key)
        out.append(p)
    return out[:n]


def measure_final(call, table: dict, roots: tuple, plans: list[Plan], rounds: int = ROUNDS,
                  timer: Callable | None = None) -> tuple[Plan, list[float]]:
    """The plan of ``plans`` with the least median step time relative to ``plans[0]``'s in
    the same round, and each plan's median ratio (see NOTE [ Final measurement ]).
    ``timer(call, roots, params) -> seconds`` runs one step (default ``calibrate.step``)."""
    if len(plans) < 2 or rounds < 1:
        return plans[0], [1.0] * len(plans)
    timer = timer or step
    params = trainable_params(table)
    times: list[list[float]] = [[] for _ in plans]
    grad = grad_enabled()
    try:
        set_grad_enabled(True)
        n = len(plans)
        for r in range(rounds + 1):  # round 0 warms each plan up
            for i in list(range(n))[r % n:] + list(range(n))[:r % n]:
                with plans[i].apply():
                    seconds = timer(call, roots, params)
                if r:
                    times[i].append(seconds)
    finally:
        set_grad_enabled(grad)
    ratios = [statistics.median(t / b for t, b in zip(ts, times[0], strict=True)) for ts in times]
    best = min(range(len(plans)), key=lambda i: (ratios[i], i))
    return plans[best], ratios

