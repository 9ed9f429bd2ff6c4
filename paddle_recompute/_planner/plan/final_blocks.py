"""Shortlisted plans as sums of block times: what the final measurement times of each plan
(NOTE [ Final measurement ] in ``final_choice.py``).

A plan's choices fall into its blocks' (every target inside one block called once per
step, one of a group of blocks alike: ``options/alike.py``) and the rest (outside blocks,
around several, on a layer called several times).  Plans with the same rest as the
solver's differ only block by block, so the difference of their step times is the
difference of the sums, over the blocks where they differ, of each block's forward and
backward under the plan's configuration for it (the plan's choices inside the block, named
relative to it).  A (group, configuration) pair is a :class:`Unit`, timed on the group's
first block alone with its captured inputs (the group's ``session``), whatever the depth.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass

from ..options.kinds import wrap_of
from .value import Plan

__all__ = ["Unit", "Composed", "compose"]


@dataclass(frozen=True)
class Unit:
    """One configuration of one group of blocks alike: ``first``, the group's first block
    (measured alone); ``config``, the choices inside a block, relative to it (hashable)."""

    first: str
    config: tuple


@dataclass
class Composed:
    """How each shortlisted plan is timed.

    Attributes:
        units: each unit -> a :class:`Plan` applying its configuration to the group's first block.
        counts: per plan, unit -> how many of its blocks take it (over the blocks where the
            composable plans differ); ``None``: the plan is timed in whole steps (its choices
            outside blocks differ from the first plan's).
    """

    units: dict
    counts: list

    def composable(self, i: int) -> bool:
        return self.counts[i] is not None


def compose(plans: list[Plan], alike: dict, table: dict) -> Composed:
    """The units of ``plans`` over the groups ``alike`` (first block -> its ``Alike``), and
    each plan's count of each; plans whose rest differs from ``plans[0]``'s are timed whole."""
    member_of = {m: first for first, group in alike.items() for m in group.members}
    split = [_split(p, member_of) for p in plans]
    rest0 = split[0][0]
    ok = [rest == rest0 for rest, _ in split]
    blocks = [m for m in member_of if any(m in inside for _, inside in split)]
    differ = [m for m in blocks
              if len({_config(inside.get(m, ()), m)
                      for (_, inside), y in zip(split, ok, strict=True) if y}) > 1]
    units: dict = {}
    counts: list = []
    for (_, inside), composable in zip(split, ok, strict=True):
        if not composable:
            counts.append(None)
            continue
        mine: Counter = Counter()
        for m in differ:
            chosen = inside.get(m, ())
            unit = Unit(member_of[m], _config(chosen, m))
            if unit not in units:
                units[unit] = _unit_plan(chosen, m, unit.first, table)
            mine[unit] += 1
        counts.append(dict(mine))
    return Composed(units, counts)


def _split(plan: Plan, member_of: dict) -> tuple[list, dict]:
    """(the plan's choices outside blocks, as sorted keys; block -> its choices inside it).
    Choices of kinds that wrap nothing (``keep``) are left out: they change nothing."""
    rest, inside = [], {}
    for c in plan.choices:
        if wrap_of(c.kind) is None:
            continue
        block = _block_of(c, member_of)
        if block is None:
            rest.append(_key(c, c.targets))
        else:
            inside.setdefault(block, []).append(c)
    return sorted(rest, key=repr), inside


def _block_of(choice, member_of: dict) -> str | None:
    """The block of ``member_of`` holding every target of ``choice``, each target called once
    per step; ``None``: none does."""
    if choice.calls != 1 or any(n != 1 for _, n in choice.members) or not choice.targets:
        return None
    found = {_enclosing(t, member_of) for t in choice.targets}
    return found.pop() if len(found) == 1 and None not in found else None


def _enclosing(name: str, member_of: dict) -> str | None:
    while True:
        if name in member_of:
            return name
        if "." not in name:
            return None
        name = name.rsplit(".", 1)[0]


def _config(choices, block: str) -> tuple:
    return tuple(sorted((_key(c, tuple(t[len(block):] for t in c.targets)) for c in choices),
                        key=repr))


def _key(choice, targets: tuple) -> tuple:
    return (choice.kind, choice.option, targets, choice.call, choice.calls, choice.span,
            choice.members, _payload_key(choice.payload))


def _payload_key(payload):
    """Payloads equal up to the name of the block they were made for share a key (an
    ``OpPolicy``'s ``block`` only names it in errors); others are their own."""
    if payload is None:
        return None
    if dataclasses.is_dataclass(payload):
        key = tuple((f.name, getattr(payload, f.name)) for f in dataclasses.fields(payload)
                    if f.compare and f.name != "block")
        try:
            hash(key)
            return key
        except TypeError:  # unhashable fields: compared by identity
            pass
    return ("id", id(payload))


def _unit_plan(choices, block: str, first: str, table: dict) -> Plan:
    """A plan applying ``choices`` (made inside ``block``) to the same layers of ``first``."""
    moved = [dataclasses.replace(
        c, targets=tuple(first + t[len(block):] for t in c.targets),
        block=first + c.block[len(block):] if c.block.startswith(block) else c.block)
        for c in choices]
    return Plan(budget=0, baseline_bytes=0, predicted_bytes=0, extra_s=0.0, forward_s=0.0,
                choices=moved, layers={t: table[t] for c in moved for t in c.targets})
