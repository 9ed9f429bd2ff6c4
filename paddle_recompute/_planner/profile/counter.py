"""The counting frame of ``profile``: which tensors are saved for backward, by whom, how big.

See NOTE [ Counting saved bytes ] in ``_planner/profile/measure.py``.  Each distinct saved tensor has one
*owner*: the stack of layers running when it was first saved; later saves of it are
remembered as further savers.  :meth:`Counter.give_to_consumer` then hands a block's input
to the block when the block saves it too (a ``Linear`` saves its input, which the previous
block's activation also saved): whether that tensor stays alive depends on the consuming
block alone, so the per-block costs add up (NOTE [ Planner model ]).  Likewise
:meth:`Counter.give_to_outside` hands a block's tensor that code outside every block saves
too (ResNet's pooling saves the last block's output) to that code.
"""

from __future__ import annotations

import bisect

from ..._core import hooks, tree
from ..._core.debug import op_label
from .result import SavedTensor

__all__ = ["Counter", "tensor_key", "spans", "layer_of"]


def tensor_key(t) -> tuple:
    """Identity of the memory a saved tensor keeps alive: the start of its buffer (every
    view of one buffer keeps all of it)."""
    return (t.data_ptr() - t._offset(),)


def layer_of(call: str) -> str:
    """The layer name of a call id (``name`` or ``name@k`` for its k-th call, k >= 1)."""
    return call.rsplit("@", 1)[0] if "@" in call else call


def _names(stack: tuple) -> list[str]:
    """Layer names of a stack of call ids, each once (a layer may call itself)."""
    return list(dict.fromkeys(layer_of(c) for c in stack))


def spans(tensors) -> list:
    """(start, end) addresses of the tensors' data."""
    out = []
    for t in tensors:
        if t is not None and t._is_initialized() and t.size:
            out.append((t.data_ptr(), t.data_ptr() + t.size * t.element_size()))
    return out




class _Entry:
    __slots__ = ("nbytes", "owner", "first", "savers", "uses", "record")

    def __init__(self, nbytes: int, owner: tuple, record):
        self.nbytes, self.owner, self.first, self.record = nbytes, owner, owner, record
        self.savers: list[tuple] = []
        self.uses: list[tuple] = []  # stacks of the calls that took the tensor as an input

    def stacks(self) -> list[tuple]:
        """Every save of the tensor and every call it was an input of."""
        return [self.first, *self.savers, *self.uses]

    def common(self) -> tuple:
        """The calls running at every save and every use of the tensor as a call's input
        (their stacks' common prefix): a region frees the tensor only if all of them lie
        inside it, since a region holds its inputs (NOTE [ Region tree ])."""
        out = self.first
        for stack in self.stacks():
            n = 0
            while n < min(len(out), len(stack)) and out[n] == stack[n]:
                n += 1
            out = out[:n]
        return out


class Counter:
    """Saved-tensor frame that keeps every tensor (the forward is unchanged) and counts it."""

    def __init__(self, excluded: list, record: bool):
        self.excluded = sorted(excluded)  # (start, end) of memory alive anyway
        self.starts = [s for s, _ in self.excluded]
        self.entries: dict[tuple, _Entry] = {}
        self.stack: list[str] = []  # call ids (``layer_of`` gives the layer)
        self.total = 0
        self.record = record
        # Producers come from observing ``paddle._C_ops`` (``observe_op``), not from
        # ``Tensor.grad_fn``: in Paddle 3.3 reading ``grad_fn`` keeps the graph alive forever.
        self.producers: dict[int, str] = {}  # data pointer -> op that last made it
        self.running = False
        self.unresolved: list = []  # records saved inside the running op
        self.pending_uses: list = []  # (key, stack): inputs not saved (yet) when the call began
        self.packs: dict[str, int] = {}  # call id -> tensors saved inside it (each save)
        self.ops = 0  # operators run so far (a run of calls is a region only with none between)

    def observe_op(self, name, fn, args, kwargs):
        """Run operator ``name``, remembering it as the producer of its outputs."""
        self.running = True
        self.ops += 1
        try:
            out = fn(*args, **kwargs)
        finally:
            self.running = False
        for t in tree.flatten(out)[0]:
            if t._is_initialized():
                self.producers[t.data_ptr()] = name
        for record, ptr in self.unresolved:  # an op saving its own output (softmax)
            record.producer = self.producers.get(ptr, "")
        self.unresolved.clear()
        return out

    def pack(self, tensor):
        for call in self.stack:  # every save, counted or not: a region packs each one
            self.packs[call] = self.packs.get(call, 0) + 1
        if tensor._is_initialized():
            self._count(tensor)
        return hooks.Kept(tensor)

    def _count(self, t) -> None:
        key = tensor_key(t)
        entry = self.entries.get(key)
        if entry is not None:
            entry.savers.append(tuple(self.stack))
            return
        if self.alive_anyway(key[0]):
            return
        n = t._holder_size()
        self.total += n
        record = None
        if self.record:
            record = SavedTensor("", op_label().split(" > ")[-1], tuple(t.shape),
                                 str(t.dtype).replace("paddle.", ""), n,
                                 self.producers.get(key[0], ""))
            if self.running:
                self.unresolved.append((record, key[0]))
        self.entries[key] = _Entry(n, tuple(self.stack), record)

    def use(self, key: tuple, stack: tuple) -> None:
        """Note that the call on top of ``stack`` took the tensor ``key`` as an input (the
        caller keeps the tensor alive until :meth:`resolve_uses`, so keys stay unique)."""
        entry = self.entries.get(key)
        if entry is not None:
            entry.uses.append(stack)
        else:
            self.pending_uses.append((key, stack))

    def resolve_uses(self) -> None:
        """Attach the uses of tensors saved after the call that took them began."""
        for key, stack in self.pending_uses:
            if key in self.entries:
                self.entries[key].uses.append(stack)
        self.pending_uses.clear()

    def alive_anyway(self, ptr: int) -> bool:
        i = bisect.bisect_right(self.starts, ptr) - 1
        return i >= 0 and ptr < self.excluded[i][1]

    def give_to_consumer(self, block: str, input_keys) -> None:
        """Make call ``block`` the owner of its inputs that it saves but another layer owns."""
        for key in input_keys:
            entry = self.entries.get(key)
            if entry is None or block in entry.owner:
                continue
            for stack in entry.savers:
                if block in stack:
                    entry.owner = stack
                    break

    def give_to_outside(self, blocks) -> None:
        """Make a tensor saved inside a block and also outside every block (the last block's
        output that pooling or the head saves) belong outside: recomputing the block does
        not free it."""
        blocks = set(blocks)  # call ids
        for entry in self.entries.values():
            if not blocks.intersection(entry.owner):
                continue
            for stack in entry.savers:
                if not blocks.intersection(stack):
                    entry.owner = stack
                    break

    def by_layer(self) -> dict[str, list[int]]:
        """Layer name -> [bytes saved inside it, bytes saved directly by it]."""
        out: dict[str, list[int]] = {}
        for e in self.entries.values():
            for name in _names(e.owner):
                out.setdefault(name, [0, 0])[0] += e.nbytes
            if e.owner:
                out[layer_of(e.owner[-1])][1] += e.nbytes
        return out

    def by_call(self) -> dict[str, list[int]]:
        """Call id -> [bytes whose savers all ran inside it, of those the ones not all inside
        one of its child calls] (NOTE [ Region tree ]); ``""`` keys nothing."""
        out: dict[str, list[int]] = {}
        for e in self.entries.values():
            common = e.common()
            for call in common:
                out.setdefault(call, [0, 0])[0] += e.nbytes
            if common:
                out[common[-1]][1] += e.nbytes
        return out

    def shared_by_children(self) -> dict[str, list[tuple[set, int]]]:
        """Call id -> [(its child calls that saved a tensor, bytes)] for the tensors of its
        ``self`` bytes that only its children saved (several of them)."""
        out: dict[str, list] = {}
        for e in self.entries.values():
            common = e.common()
            depth = len(common)
            stacks = e.stacks()
            if not common or any(len(s) == depth for s in stacks):
                continue
            out.setdefault(common[-1], []).append(({s[depth] for s in stacks}, e.nbytes))
        return out

    def inside_call(self, key: tuple, call: str) -> bool | None:
        """Whether the saved tensor ``key`` counts inside ``call`` (None: not saved)."""
        entry = self.entries.get(key)
        return None if entry is None else call in entry.common()

    def saved(self) -> list[SavedTensor] | None:
        """One record per counted tensor, in save order, attributed to its owner."""
        if not self.record:
            return None
        for e in self.entries.values():
            e.record.layer = layer_of(e.owner[-1]) if e.owner else "<outside layers>"
        return [e.record for e in self.entries.values()]
