"""Blocks alike, measured once and alone: the operator recording and the measured options of
a block stand for every block alike (NOTE [ Blocks measured alone ]).

NOTE [ Blocks measured alone ]: the measured options (``options/policies.py``) and the
operator recording (``options/op_profile.py``) ran the whole step for every option and
round, with the option on every block: their cost grew with depth, and on PaddleFormers'
Llama (4 layers, hidden 512) they were most of a plan's minutes.  A block called once per
step is now measured alone: the profile's first forward (or, on a profile given to
``plan``, one forward of the step) captures the inputs of the first block of each kind
(those that take a gradient as fresh leaves that do), blocks alike (NOTE [ Alike calls ] in
``profile/alike.py``) form a group, and the group's first block is recorded and measured on
its captured call alone (a forward + ``paddle.grad`` backward of that block, its state put
back), every round and option as before.  The other blocks of the group take its operator
graph and its measured (bytes, seconds).  What a region holds and how long its rerun and
its forward take depend on the block's own operators and inputs, not on the layers around
it, so the measurement stands; what the layers around do to the step (the caches a long
step evicts) is seen only where the final measurement times whole steps, for plans that
differ outside blocks; it times block configurations alone otherwise (NOTE [ Final
measurement ] in ``plan/final_choice.py``).  A block called several times per step, and a
unit that is one call of a layer (NOTE [ Operator units ] in ``options/units.py``), are
measured in the whole step as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..._core import tree
from ..._core.amp import grad_enabled, set_grad_enabled
from ..._core.state import ForwardState
from ..._entry.routing import route_forwards
from ..harness import Session, trainable_params
from ..profile.alike import call_key, capture
from .policies import measure_options

__all__ = ["Alike", "alike_blocks", "measure_alike", "split_alike", "share_costs"]


@dataclass(eq=False)
class Alike:
    """A group of blocks alike: ``members`` (its first measured), and ``session``, the first
    member's captured call alone."""

    members: tuple[str, ...]
    session: Session


def alike_blocks(session: Session, captured: dict | None = None) -> dict[str, Alike]:
    """First block -> its group, for the profile's blocks called once per step.  Their calls
    are ``captured`` by the profile (block -> (call key, its call when the first of its key):
    ``profile_calls`` in ``profile/measure.py``) when it ran in this plan, else captured by
    one forward of the step (state put back)."""
    prof = session.prof
    once = [b for b in prof.blocks if prof.layers[b].calls == 1]
    if not once or not session.params:
        return {}
    groups = _groups(once, captured) if captured is not None else None
    if groups is None:
        captured = _captured(session, once)
        groups = _groups(once, captured)
    return {members[0]: Alike(tuple(members), _alone(session, members[0], captured[members[0]][1]))
            for members in groups}


def _groups(once: list, captured: dict) -> list | None:
    """The blocks ``once`` in groups alike, each led by a block whose call was captured (None
    when a group has none)."""
    groups: dict = {}
    for b in once:
        if b in captured:
            key = captured[b][0]
            groups.setdefault(b if key is None else key, []).append(b)
    for members in groups.values():  # the one whose call was captured first
        members.sort(key=lambda b: captured[b][1] is None)
        if captured[members[0]][1] is None:
            return None
    return list(groups.values())


def _captured(session: Session, once: list) -> dict:
    """Block -> (call key, its call when the first of its key), by one forward of the step."""
    captured: dict[str, tuple] = {}

    def wrap_of(name):
        def wrap(forward):
            def run(*args, **kwargs):
                if name not in captured:
                    key = call_key(session.table[name], args, kwargs)
                    captured[name] = (key, capture((args, kwargs), captured, key))
                return forward(*args, **kwargs)

            return run

        return wrap

    fn, args, kwargs = session.call
    grad = grad_enabled()
    try:
        set_grad_enabled(True)
        with route_forwards((session.table[b], wrap_of(b)) for b in once), \
                ForwardState(True, session.roots).replayed():
            fn(*args, **kwargs)
    finally:
        set_grad_enabled(grad)
    return captured


def _alone(session: Session, block: str, call: tuple) -> Session:
    layer = session.table[block]
    args, kwargs = call
    alone = Session((layer, args, kwargs), session.table, (layer,), session.prof)
    # its gradients reach the block's parameters and the inputs that take one (a frozen
    # block still reruns in backward for its input's gradient)
    alone.params = trainable_params({block: layer}) + [
        t for t in tree.flatten((args, kwargs))[0] if not t.stop_gradient]
    return alone


def split_alike(options: dict, alike: dict[str, Alike]) -> tuple[dict, dict]:
    """``options`` (label -> {unit: wrap}) as (the whole step's: units not in a group;
    first block -> its own options, the group's other members left out: they share)."""
    member_of = {m: first for first, group in alike.items() for m in group.members}
    whole: dict = {}
    alone: dict = {}
    for label, wraps in options.items():
        for unit, wrap in wraps.items():
            first = member_of.get(unit)
            if first is None:
                whole.setdefault(label, {})[unit] = wrap
            elif unit == first:
                alone.setdefault(first, {}).setdefault(label, {})[unit] = wrap
    return whole, alone


def share_costs(prof, alike: dict[str, Alike]) -> None:
    """Give each group's other members its first block's measured options."""
    for first, group in alike.items():
        costs = prof.policy_costs.get(first, {})
        for member in group.members[1:]:
            mine = prof.policy_costs.setdefault(member, {})
            for label, cost in costs.items():
                mine.setdefault(label, cost)


def measure_alike(session: Session, options: dict, alike: dict[str, Alike]) -> None:
    """``measure_options`` for ``options`` (label -> {unit: wrap}): each group's first block
    alone, its costs shared with the group, the other units in the whole step."""
    whole, alone = split_alike(options, alike)
    measure_options(session, whole)
    for first, own in alone.items():
        measure_options(alike[first].session, own)
    share_costs(session.prof, alike)
