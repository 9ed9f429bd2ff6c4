"""A profile of a deeper (or shallower) model of the same blocks, from a profile with fewer.

NOTE [ Depth ]: a model of N blocks is planned from a profile of the same model with n
blocks (n >= 3) when its blocks match the profiled ones in structure (every sublayer's
name relative to its block and type, every parameter's shape and dtype).  The first block
differs from the rest (its input is the embedding's output, which nothing before it saves)
and so does the last (its output feeds the final norm), so block 0 takes the profiled block
0's rows, block N-1 the profiled last block's, and the blocks between take the profiled
middle blocks' in turn (block i the profiled 1 + (i - 1) mod (n - 2)).  Each block's layers
and calls are the profiled block's, renamed; the model, its containers and their calls add
what the blocks added (saved bytes, tensors saved, forward and rerun time); their own bytes
are unchanged.  Ranges of children that share saved tensors (``CallProfile.shared_bytes``)
and inputs several blocks take (``Profile.shared_inputs``) that span all profiled blocks
span all blocks; one that ends at a middle block cannot be placed and raises.  Blocks that
differ by position in what their structure does not show (Gemma 3's sliding-window and
global layers, set by the config) take the profiled blocks' rows: on Gemma 3 at 9 layers
from 4, one mask is listed as taken by all 9 blocks where 8 take it (the byte counts agree).  On
PaddleFormers' Llama the profile of 32 blocks built from 8 equals the measured one in every
byte count (``tests/planner/test_profile_scale.py``).
"""

from __future__ import annotations

import copy
from dataclasses import replace

from .blocks import inside
from .result import Profile

__all__ = ["deepen"]


def deepen(api: str, prof: Profile, table: dict, blocks: list[str], structure: dict) -> Profile:
    """``prof`` (of a model with ``len(prof.blocks)`` blocks) as a profile of the model whose
    layers are ``table`` and blocks ``blocks`` (NOTE [ Depth ]).

    Raises:
        ValueError: the blocks or the layers outside them do not match, fewer than 3 blocks
            were profiled for another depth, or a block was called more than once.
    """
    small, n, count = prof.blocks, len(prof.blocks), len(blocks)
    if small == blocks:
        return copy.deepcopy(prof)
    if n < 3 or count < 2:
        raise ValueError(f"{api}: to plan {count} blocks from a profile of {n}, profile at least 3 "
                         "blocks (the first and last differ from the middle ones) and plan 2 or more")
    source = [0] + [1 + (i - 1) % (n - 2) for i in range(1, count - 1)] + [n - 1]
    _check(api, prof, structure, blocks, source)
    for b in small:
        if prof.layers[b].calls != 1:
            raise ValueError(f"{api}: block {b!r} was called {prof.layers[b].calls} times; "
                             "only blocks called once each can be repeated")
    return _Deepened(prof, table, blocks, source).profile()


def _relative(structure: dict, prefix: str) -> list:
    """The block's entries of ``structure`` with names relative to it."""
    def rel(name):
        return name[len(prefix):] if name == prefix or name.startswith(prefix + ".") else None
    layers = [[rel(name), kind] for name, kind in structure["layers"] if rel(name) is not None]
    params = [[rel(name), shape, dtype] for name, shape, dtype in structure["parameters"]
              if rel(name) is not None and rel(name) != "" and rel(name)[0] == "."]
    return [layers, params]


def _outside(structure: dict, blocks: list[str]) -> list:
    def out(name):
        return not any(name == b or inside(name, b) for b in blocks)
    return [[e for e in structure["layers"] if out(e[0])],
            [e for e in structure["parameters"] if out(e[0].rsplit(".", 1)[0])]]


def _check(api: str, prof: Profile, structure: dict, blocks: list[str], source: list[int]) -> None:
    saved = prof.structure
    if saved is None:
        raise ValueError(f"{api}: the profile records no model structure (a file written before "
                         "it was recorded); profile the small model again")
    for i, b in enumerate(blocks):
        if _relative(structure, b) != _relative(saved, prof.blocks[source[i]]):
            raise ValueError(f"{api}: block {b!r} differs from the profiled block "
                             f"{prof.blocks[source[i]]!r} (its sublayers, types or parameter "
                             "shapes); the profile must be of the same blocks")
    if _outside(structure, blocks) != _outside(saved, prof.blocks):
        raise ValueError(f"{api}: the layers outside the blocks differ from the profiled model's "
                         "(names, types or parameter shapes); only the number of blocks may differ")


class _Deepened:
    """The renaming and the sums that turn the small profile into the deep one."""

    def __init__(self, prof: Profile, table: dict, blocks: list[str], source: list[int]):
        self.prof, self.table, self.blocks, self.source = prof, table, blocks, source
        self.small = prof.blocks

    def _block_of(self, name: str) -> int | None:
        base = name.split("@", 1)[0]
        for j, b in enumerate(self.small):
            if base == b or inside(base, b):
                return j
        return None

    def _rename(self, name: str, i: int) -> str:
        j = self.source[i]
        return self.blocks[i] + name[len(self.small[j]):]

    def _delta(self, rows: dict, field: str) -> float:
        big = sum(getattr(rows[self.small[j]], field) or 0 for j in self.source)
        return big - sum(getattr(rows[b], field) or 0 for b in self.small)

    def profile(self) -> Profile:
        prof = self.prof
        out = copy.deepcopy(prof)
        out.op_profiles = {}
        out.blocks = list(self.blocks)
        grown = self._delta(prof.layers, "saved_bytes")
        out.total_bytes = prof.total_bytes + grown
        out.forward_s = prof.forward_s + self._delta(prof.layers, "forward_s")
        out.layers = self._layers()
        out.calls = self._calls()
        out.shared_inputs = [(nb, self._takers(names)) for nb, names in prof.shared_inputs]
        position = {c: k for k, c in enumerate(out.calls)}
        out.shared_call_inputs = [(nb, tuple(sorted(self._call_takers(calls), key=position.__getitem__)))
                                  for nb, calls in prof.shared_call_inputs]
        out.saved = self._saved()
        out.policy_costs = self._per_block(prof.policy_costs)
        out.step_costs = self._per_block(prof.step_costs)
        return out

    def _per_block(self, costs: dict) -> dict:
        out = {k: dict(v) for k, v in costs.items() if self._block_of(k) is None}
        for i, b in enumerate(self.blocks):
            if self.small[self.source[i]] in costs:
                out[b] = {k: v for k, v in costs[self.small[self.source[i]]].items()
                          if not k.startswith("ops:")}
        return out

    def _children(self, name: str) -> list[str]:
        prefix = f"{name}." if name else ""
        return [c for c in self.table if c.startswith(prefix) and c != name
                and "." not in c[len(prefix):]]

    def _layers(self) -> dict:
        prof, rows = self.prof, {}
        sums = {f: self._delta(prof.layers, f) for f in ("saved_bytes", "forward_s", "recompute_s")}
        for name in self.table:
            i = next((k for k, b in enumerate(self.blocks) if name == b or inside(name, b)), None)
            if i is not None:
                row = prof.layers[self.small[self.source[i]] + name[len(self.blocks[i]):]]
                rows[name] = replace(row, name=name, children=self._children(name))
                continue
            row = prof.layers[name]
            if row.calls and any(inside(b, name) for b in self.small):
                row = replace(row, saved_bytes=row.saved_bytes + int(sums["saved_bytes"]),
                              forward_s=row.forward_s + sums["forward_s"],
                              recompute_s=None if row.recompute_s is None
                              else row.recompute_s + sums["recompute_s"])
            rows[name] = replace(row, children=self._children(name))
        return rows

    def _calls(self) -> dict:
        prof = self.prof
        subtree: dict = {j: [] for j in range(len(self.small))}
        order = []  # call ids outside the blocks, with None where the blocks go
        for cid, row in prof.calls.items():
            j = self._block_of(row.layer)
            if j is None:
                order.append(cid)
            else:
                if not order or order[-1] is not None:
                    if None in order:
                        raise ValueError("the blocks' calls are not made one after another; "
                                         "their profile cannot be repeated")
                    order.append(None)
                subtree[j].append(cid)
        ancestors = self._ancestors()
        sums = {f: self._delta(prof.calls, f) for f in ("saved_bytes", "saves", "forward_s", "recompute_s")}
        out = {}
        for cid in order:
            if cid is not None:
                out[cid] = self._outer_call(prof.calls[cid], cid in ancestors, sums)
                continue
            for i in range(len(self.blocks)):
                for sub in subtree[self.source[i]]:
                    row = prof.calls[sub]
                    parent = row.parent if self._block_of(row.layer) is not None and \
                        row.layer in self.small else self._rename(row.parent, i)
                    out[self._rename(sub, i)] = replace(
                        row, id=self._rename(sub, i), layer=self._rename(row.layer, i), parent=parent,
                        children=[self._rename(c, i) for c in row.children])
        return out

    def _ancestors(self) -> set:
        found = set()
        for b in self.small:
            parent = self.prof.calls[b].parent
            while parent is not None:
                found.add(parent)
                parent = self.prof.calls[parent].parent
        return found

    def _outer_call(self, row, ancestor: bool, sums: dict):
        if not ancestor:
            return copy.deepcopy(row)
        small_pos = {c: k for k, c in enumerate(row.children)}
        children, origin = [], []  # new children, and the small child each stands for
        for c in row.children:
            j = self.small.index(c) if c in self.small else None
            if j == 0:
                children += self.blocks
                origin += [self.small[self.source[i]] for i in range(len(self.blocks))]
            elif j is None:
                children.append(c)
                origin.append(c)
        new_pos = {c: k for k, c in enumerate(children)}
        chained = [row.chained[small_pos[origin[k]]] for k in range(len(children) - 1)]
        shared = [(self._place(row.children[f], new_pos, True),
                   self._place(row.children[last], new_pos, False), nb)
                  for f, last, nb in row.shared_bytes]
        return replace(row, children=children, chained=chained, shared_bytes=shared,
                       saved_bytes=row.saved_bytes + int(sums["saved_bytes"]),
                       saves=row.saves + int(sums["saves"]),
                       forward_s=row.forward_s + sums["forward_s"],
                       recompute_s=row.recompute_s + sums["recompute_s"])

    def _place(self, child: str, new_pos: dict, start: bool) -> int:
        """The new position of a shared range's end at the small ``child``."""
        if child not in self.small:
            return new_pos[child]
        j = self.small.index(child)
        if j == 0:
            return new_pos[self.blocks[0]]
        if j == len(self.small) - 1:
            return new_pos[self.blocks[-1]]
        if start:
            return new_pos[self.blocks[j]]
        raise ValueError(f"saved tensors shared by blocks up to the middle block {child!r} "
                         "cannot be placed in a model of another depth")

    def _takers(self, names: tuple) -> tuple:
        if set(names) == set(self.small):
            return tuple(self.blocks)
        js = {self.small.index(n) for n in names if n in self.small}
        return tuple(b for i, b in enumerate(self.blocks) if self.source[i] in js) + \
            tuple(n for n in names if n not in self.small)

    def _call_takers(self, calls: tuple) -> set:
        """The deep model's calls standing for the small one's ``calls``: a block's calls
        for every block that repeats it (NOTE [ Depth ])."""
        out = set()
        for c in calls:
            j = self._block_of(c)
            if j is None:
                out.add(c)
                continue
            out.update(self._rename(c, i) for i in range(len(self.blocks)) if self.source[i] == j)
        return out

    def _saved(self) -> list:
        per_block: dict = {j: [] for j in range(len(self.small))}
        out, placed = [], False
        for t in self.prof.saved:
            j = self._block_of(t.layer)
            if j is None:
                out.append(t)
                continue
            per_block[j].append(t)
            if not placed:
                out.append(None)
                placed = True
        blocks = [replace(t, layer=self._rename(t.layer, i)) for i in range(len(self.blocks))
                  for t in per_block[self.source[i]]]
        k = out.index(None) if placed else len(out)
        return out[:k] + blocks + out[k + 1:]
