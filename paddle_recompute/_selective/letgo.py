"""Kept outputs a region that keeps everything lets go of in forward, as the plain forward does.

NOTE [ Kept outputs let go ]: a policy region holds each kept operator output so that a
rerun can skip the operator (NOTE [ Selective recompute ] in ``frame.py``).  Held to the end
of the forward, the outputs nobody saves make a region that keeps everything peak higher
than the plain forward, which frees them at once (PaddleFormers' Llama: the attention
scores' chain, four 8 MiB tensors a layer; on the CPU with glibc malloc, fresh pages every
step).  But as long as every operator observed so far can be skipped and every slot packed
so far is kept, no rerun needs anything yet, and a skipped operator needs no inputs.  So
while that holds, a kept output whose tensor dies in forward is let go (a weak reference
per held output tells when), unless a kept slot holds its buffer anyway (then letting go
frees nothing).  Its operator is then no longer skippable, and its buffer's address leaves
``kept_ptrs`` (the buffer may be freed, and a new tensor get the address).  The first
operator that cannot be skipped or slot that is not kept ends the letting go for the region,
and so does the end of its forward (``stop``), which also drops the weak references.

Letting go is a bet that no rerun comes: if the region later packs a slot that is not kept,
its rerun runs the operators let go (from the same inputs, so with the same values) where
it would have skipped them.  Only regions whose policy keeps everything
(``policies.keeps_everything``: ``save_all``) bet, as they rerun only for a tensor saved
from outside any observed operator; under any other policy a later operator's output is
likely not kept (a kept projection before an unkept activation would run again).
"""

from __future__ import annotations

import weakref

__all__ = ["LetGo"]


class LetGo:
    """The letting go of one policy region's forward (``on``: the policy keeps everything);
    see NOTE [ Kept outputs let go ].  Shares the frame's ``ops``, ``refs`` and ``kept_ptrs``
    (never the frame: no cycle)."""

    __slots__ = ("ops", "refs", "kept_ptrs", "watching", "slot_ptrs", "ops_seen", "slots_seen")

    def __init__(self, ops: list, refs: list, kept_ptrs: dict, on: bool):
        self.ops, self.refs, self.kept_ptrs = ops, refs, kept_ptrs
        # id(weak ref) -> (ref, operator record, output); None: not letting go
        self.watching: dict | None = {} if on else None
        self.slot_ptrs: set[int] = set()  # buffers kept slots hold
        self.ops_seen = self.slots_seen = 0  # operators and slots found skippable and kept

    def slot_kept(self, tensor) -> None:
        """A handle carries ``tensor``: its buffer lives to backward whatever is let go."""
        if self.watching is not None:
            self.slot_ptrs.add(tensor.data_ptr())

    def watch(self, op, i: int, t) -> None:
        """``op``'s output ``i`` (``t``) is held: let it go when ``t`` dies, if it may then."""
        if self.watching is not None:
            ref = weakref.ref(t, self._died)
            self.watching[id(ref)] = (ref, op, i)

    def stop(self) -> None:
        """The forward ended: held outputs stay held."""
        self.watching = None
        self.slot_ptrs = set()

    def _died(self, ref) -> None:
        entry = self.watching.pop(id(ref), None) if self.watching is not None else None
        if entry is None or not self._nothing_needed():
            return
        _, op, i = entry
        held = op.held[i]
        if held is None or held.data_ptr() in self.slot_ptrs:
            return
        if self.kept_ptrs.get(held.data_ptr()) is held:
            del self.kept_ptrs[held.data_ptr()]
        op.held[i] = None
        op.skippable = False

    def _nothing_needed(self) -> bool:
        """Every operator decided so far can be skipped and every slot before the undecided
        one is kept (its handle dead); else letting go stops for good."""
        ops, refs = self.ops, self.refs
        k, j = self.ops_seen, self.slots_seen
        while k < len(ops) and ops[k].pending is None:  # decided: its slots are known
            if not ops[k].skippable:
                self.stop()
                return False
            k += 1
        end = ops[k].first if k < len(ops) else len(refs)
        while j < end:
            if refs[j]() is not None:  # a live handle: a rerun will want its tensor
                self.stop()
                return False
            j += 1
        self.ops_seen, self.slots_seen = k, j
        return True
