"""The plan's last step: of the few best plans that fit, the one measured fastest.

NOTE [ Final measurement ]: the solver ranks plans by predicted time, and predictions of
region options are measured reruns scaled to the profile's clock (``options/policies.py``),
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

ordered by predicted time, at most ``CANDIDATES`` of them.  With two or more, they are
timed ``rounds`` rounds interleaved in rotating order, and the plan
with the least median time relative to the solver's plan in the same round leads (the load
of a shared machine drifts between rounds; the ratio cancels it).  Times are by the
planner's clock: CPU time on the CPU, the wall clock on an accelerator (NOTE [ Planning
clock ] in ``harness.py``).  Fitting is by prediction: a plan the solver's model says
exceeds the budget is never measured.

What is timed is what differs between the plans, block by block (``final_blocks.py``).
Timing each plan's whole step made this stage grow with depth and dominate ``plan`` (on
PaddleFormers' Llama, hidden 256, 29 s of CPU time of 47 at 4 layers, 209 s of 251 at 32),
while shortlisted plans mostly differ in which option some blocks of a group alike take
(``ops:3`` on two blocks and ``ops:4`` on two, against ``ops:3`` on all four).  A plan's
choices inside one block called once per step (every target inside it) make that block's
configuration; its other choices (outside blocks, around several, on layers called several
times) are its rest.  Plans with the solver's rest differ only in their blocks, so the
difference of their steps is the difference of the sums, over the blocks where they
differ, of each block's forward + backward under the plan's configuration for it.  Blocks
alike run alike (NOTE [ Blocks measured alone ] in ``options/alike.py``), so each
distinct (group, configuration) pair is timed once a round on the group's first block alone
with its captured inputs (``Alike.session``: state put back, ``.grad`` untouched), and a
plan's time in a round is the sum over its differing blocks of its pairs' times: the
pairs are few and do not grow with depth, and a pair two plans share is one timing, which
cancels exactly between them.  A plan whose rest differs from the solver's is timed in
whole steps (``Session.step``, the plan applied), and then so is the solver's plan, as the
anchor: a composed plan's time is the solver's step plus the difference of their block sums.
Without groups (no block called once per step, nothing that takes a gradient) every plan is
timed in whole steps.  Whole steps are warmed up once before the rounds; blocks alone are
not: their configurations ran in ``measure_options`` or are options of the same block, and
a first run measured no slower than the later ones (the GPT harness and PaddleFormers'
Llama on CPU, each unit's first time within the spread of its three or five later ones,
``sub:attn`` included, which no earlier stage ran), where warming them up took a quarter of
this stage.  With no whole steps the ratios returned are of block sums, not of
steps.  What a block alone does not see (the caches a long step evicts, which depend on how
much the plan holds) is left out, as in the measured options' own times.  It shows: on the
Llama at hidden 512, ``ops:8`` on every layer led the rounds by blocks (0.93 of the
solver's block sum) but measured 0.28 of full recompute's extra time in whole steps against
the solver's 0.23 (``docs/benchmarks.md``); the duel kept the solver's plan.

The prediction is the default and a measurement must overturn it beyond its noise.  Three
rounds of single steps cannot separate plans a few percent apart on a loaded machine: the
twice-listed model of ``benchmarks/regions.py`` (one ``Sequential`` holding a block
twice) measured 0.44-0.52 of the least plan's extra time in four runs and 0.67 in a fifth,
where the rounds put the run rerun whole (predicted slower, and slower) ahead of the
solver's ``ops`` point by chance.  So when the leader is not the best-predicted plan (the
least ``extra_s``, the first on ties), the two meet in a duel: ``DUEL_ROUNDS`` fresh
paired rounds (the pairs the two take on different numbers of blocks, or with whole steps
one step of each, timed once, the order alternating, so neither always runs on the other's
warm caches), and the leader is returned only if it was faster in so many of them that a
one-sided sign test rejects "neither is faster" at ``ALPHA`` (``duel_wins``: 6 of 6); a tie
counts against it.  Fresh rounds, because the leader was picked as the least of several
noisy medians, which flatters it (the winner's curse); paired, because a step
against the step beside it cancels the load's drift; a sign test, because a loaded
machine's step times are skewed by bursts that no variance describes, and the test assumes
only that, were the two plans equally fast, either is as likely to win a round.  The duel
stops as soon as its outcome is fixed (at its first loss), which gives the same answer as
all its rounds.  Six rounds, all to be won, rather than eight with one loss allowed: a
challenger no faster than the prediction loses within two rounds on average instead of
four, and each round times every unit where the two differ (on the GPT harness over the
call tree, three units a round: a long duel made the final stage 28 s of a 68 s
plan, and none of the four duels seen there and on its blocks was won).  The price is
power: a challenger that wins each round with probability 0.8 wins the duel one time in
four rather than one in two, and the prediction, now priced steadily (NOTE [ Region
forward ] in ``options/policies.py``), stands.

``plan`` times a plan only when it is predicted within ``SLOWER`` (1.5) times the least
predicted extra time (``worth_timing``): measured times have differed from predictions by
1.1-1.4x, the same way for every plan of a model, and timing a plan far from the least
costs as much as timing a near one.  A plan that needs whole steps costs steps of the
model (on PaddleFormers' Llama over the call tree, a plan with a run around the final norm
and the head, predicted 1.9x the solver's cost, took two thirds of the final stage); one
composed of blocks brings units of its own (on the GPT harness over the call tree, the
``"masks"`` policy with runs inside blocks, predicted 1.7x and 2.8x in two plans, three
units each, then a duel it lost: the stage took 28 s of a 66 s plan).

Cost: ``rounds x pairs`` forwards + backwards of one block (defaults: 3 rounds; on
the Llama above at hidden 256, 4 or 5 pairs of one decoder layer, with a warm-up round
then: 10.7 s of CPU time at 4 layers and 9.0 s at 32, against 28.8 s and 293.6 s for whole steps), plus
``DUEL_ROUNDS`` paired rounds at most when a plan other than the best-predicted leads;
whole steps only for plans that differ outside blocks (and the solver's beside them).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable

from ..._core.amp import grad_enabled, set_grad_enabled
from ..harness import Session
from .final_blocks import Composed, compose
from .value import Plan

__all__ = ["shortlist", "worth_timing", "uniform_choices", "kind_subsets", "measure_final",
           "duel_wins", "ROUNDS", "CANDIDATES", "DUEL_ROUNDS", "ALPHA", "SLOWER"]

ROUNDS = 3
CANDIDATES = 4
DUEL_ROUNDS = 6
ALPHA = 0.05
SLOWER = 1.5


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


def worth_timing(plans: list[Plan]) -> list[Plan]:
    """``plans`` less those predicted slower than ``SLOWER`` times the least predicted extra
    time; the first always stays."""
    least = min(p.extra_s for p in plans)
    return [p for i, p in enumerate(plans)
            if i == 0 or p.extra_s - least <= (SLOWER - 1) * abs(least)]


def _composed(plans: list[Plan], alike: dict, table: dict) -> Composed:
    """How each of ``plans`` is timed: by blocks over the groups ``alike``; with none, every
    plan in whole steps."""
    return compose(plans, alike, table) if alike else Composed({}, [None] * len(plans))


def shortlist(plans: list[Plan], budget: int, n: int = CANDIDATES) -> list[Plan]:
    """Distinct plans (by their choices) that fit ``budget``, by predicted time, at most ``n``;
    the first of ``plans`` (the solver's) always stays."""
    seen, out = set(), []
    first, rest = plans[0], sorted(plans[1:], key=lambda p: p.extra_s)
    for p in [first, *rest]:
        key = tuple((c.block, c.option, c.call, c.span) for c in p.choices)
        if key in seen or p.predicted_bytes > budget:
            continue
        seen.add(key)
        out.append(p)
    return out[:n]


def measure_final(session: Session, plans: list[Plan], rounds: int = ROUNDS,
                  timer: Callable | None = None,
                  alike: dict | None = None) -> tuple[Plan, list[float]]:
    """The plan to return: the best-predicted of ``plans`` unless the one with the least
    median time relative to ``plans[0]``'s in the same round also wins the duel against it;
    and each plan's median ratio (see NOTE [ Final measurement ]).
    ``timer(session) -> seconds`` runs one step (default ``Session.step``); ``alike`` (first
    block -> its ``Alike``, ``options/alike.py``): the groups whose blocks are timed alone
    (none: every plan is timed in whole steps)."""
    if len(plans) < 2 or rounds < 1:
        return plans[0], [1.0] * len(plans)
    alike = alike or {}
    composed = _composed(plans, alike, session.table)
    timed = _Timed(session, timer or Session.step, alike, composed, plans)
    grad = grad_enabled()
    try:
        set_grad_enabled(True)
        ratios = _rounds(timed, rounds)
        leader = min(range(len(plans)), key=lambda i: (ratios[i], i))
        best = min(range(len(plans)), key=lambda i: (plans[i].extra_s, i))
        if leader != best and _duel(timed, best, leader):
            best = leader
    finally:
        set_grad_enabled(grad)
    return plans[best], ratios


class _Timed:
    """Timed items: whole steps of a plan (its index) and units (a block configuration on
    its group's first block alone); each plan's time composed of them."""

    def __init__(self, session: Session, timer: Callable, alike: dict, composed: Composed,
                 plans: list[Plan]):
        self.session, self.timer, self.alike = session, timer, alike
        self.composed, self.plans = composed, plans
        n = len(plans)
        # whole steps: the plans not composable, and the first plan as their anchor
        self.whole = [i for i in range(n) if not composed.composable(i)]
        if self.whole and 0 not in self.whole:
            self.whole.insert(0, 0)

    def items(self, indices) -> list:
        """What to time for the plans ``indices``: each one's whole step or its units."""
        out: list = []
        for i in indices:
            if i in self.whole:
                out.append(i)
            if self.composed.composable(i):  # the anchor's too: composed plans subtract them
                out += [u for u in self.composed.counts[i] if u not in out]
        return out

    def net(self, a: int, b: int) -> dict:
        """Unit -> how many more of plan ``b``'s blocks than of plan ``a``'s take it (each
        composable), the units they take equally often left out: those cancel."""
        ca, cb = self.composed.counts[a], self.composed.counts[b]
        out = {u: cb.get(u, 0) - ca.get(u, 0) for u in dict.fromkeys([*ca, *cb])}
        return {u: k for u, k in out.items() if k}

    def __call__(self, item) -> float:
        if isinstance(item, int):
            with self.plans[item].apply():
                return self.timer(self.session)
        with self.composed.units[item].apply():
            return self.timer(self.alike[item.first].session)

    def blocks_s(self, i: int, seconds: dict) -> float:
        """Plan ``i``'s seconds over the blocks where the plans differ."""
        return sum(k * seconds[u] for u, k in self.composed.counts[i].items())

    def plan_s(self, i: int, seconds: dict) -> float:
        """Plan ``i``'s time in one round: its whole step; with whole steps around, a
        composable plan's is the first plan's step plus the difference of their blocks'."""
        if i in self.whole:
            return seconds[i]
        if not self.whole:
            return self.blocks_s(i, seconds)
        return seconds[0] + self.blocks_s(i, seconds) - self.blocks_s(0, seconds)


def _rounds(timed: _Timed, rounds: int) -> list[float]:
    """Each plan's median time relative to ``plans[0]``'s in the same round, over ``rounds``
    rounds of its items in rotating order, after a warm-up of the whole steps (NOTE [ Final
    measurement ]: blocks alone need none)."""
    n = len(timed.plans)
    items = timed.items(range(n))
    for i in timed.whole:
        timed(i)
    times: list[list[float]] = [[] for _ in range(n)]
    for r in range(1, rounds + 1):
        k = r % len(items) if items else 0
        seconds = {item: timed(item) for item in items[k:] + items[:k]}
        for i in range(n):
            times[i].append(timed.plan_s(i, seconds))
    return [statistics.median(_ratio(t, b) for t, b in zip(ts, times[0], strict=True))
            for ts in times]


def _ratio(seconds: float, base: float) -> float:
    return seconds / base if base else 1.0  # 0 s: plans that differ in no timed block


def duel_wins(rounds: int = DUEL_ROUNDS, alpha: float = ALPHA) -> int:
    """The least number of won rounds out of ``rounds`` at which a one-sided sign test rejects
    "equally fast" at level ``alpha`` (``rounds + 1``: never)."""
    tail = 0
    for wins in range(rounds, -1, -1):
        tail += math.comb(rounds, wins)
        if tail / 2 ** rounds > alpha:
            return wins + 1
    return 0


def _duel(timed: _Timed, incumbent: int, challenger: int) -> bool:
    """Whether plan ``challenger`` is faster than plan ``incumbent`` beyond the noise: paired
    rounds (of their units when both are composed of blocks, else of whole steps), stopped
    once the sign test's outcome is fixed (NOTE [ Final measurement ])."""
    need, wins, losses = duel_wins(), 0, 0
    both = (incumbent, challenger)
    blocks = all(timed.composed.composable(i) for i in both)
    net = timed.net(incumbent, challenger) if blocks else {}
    items = list(net) if blocks else list(both)
    for r in range(DUEL_ROUNDS):
        if wins >= need or DUEL_ROUNDS - losses < need:
            break
        order = items[::-1] if r % 2 else items
        seconds = {item: timed(item) for item in order}
        if blocks:  # the challenger's block sum less the incumbent's
            faster = sum(k * seconds[u] for u, k in net.items()) < 0
        else:
            faster = seconds[challenger] < seconds[incumbent]
        wins, losses = (wins + 1, losses) if faster else (wins, losses + 1)
    return wins >= need
