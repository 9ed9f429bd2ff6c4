"""State a region's forward writes to its layers, put back as it was for the rerun.

NOTE [ Forward writes ]: a forward may write state on the layers it runs: BatchNorm its running
statistics (in place), ``paddle.nn.utils.spectral_norm``'s pre-hook its ``weight_u`` /
``weight_v`` (in place, by a power iteration) and ``weight`` (reassigned), a user layer a call
counter (a buffer, or a Python attribute).  A rerun must start from the state the forward
started from, or it computes something else (spectral norm: another weight, another gradient),
and must leave the state as it found it, or the state moves twice per step.  No list of layer
types says which: a region watches every layer it can reach (``ForwardState.layers``).

- At forward start (:func:`watch`), per layer: shallow copies of its buffer and parameter
  tables and of its ``__dict__`` (the values' identities), and the in-place version of each
  buffer and each parameter that gets no gradient (its state entries).  That is cheap; a
  value is copied only where an in-place write must be undone (below).
- After the forward (:meth:`Watch.done`): an entry whose identity changed was reassigned, and
  the rerun gets the old object back; an entry written in place by an operator that moves
  its version (``paddle.assign(..., output=)``, ``x.add_()``: spectral norm's power
  iteration) gets a copy of its pre-forward value, taken at forward start and held until
  the rerun.  Paddle's ``batch_norm`` kernel writes its running statistics in place without
  moving their version, and its output in training does not read them: such an entry, seen
  by its value, gets a fresh copy of what the forward left at the rerun, which the rerun
  writes to (nothing held from forward to backward, as for BatchNorm before).
- Which entries a forward writes in place, and how, is learned per layer instance and
  training flag: the first watched forward copies every state entry and compares versions
  and values; later forwards copy only the entries written moving their version.  An entry
  whose version moved but was not learned (a layer that first ran without writing it) has
  no pre-forward copy: the rerun raises ``RecomputeError`` naming the layer and the entry,
  rather than differentiate another value.  An attribute reassigned to an equal value
  counts as unchanged.
- ``register_stateful_layer`` types are copied whole at every forward start and all their
  entries restored, for writes no version shows (``Tensor.set_value``).
- Around the rerun (:class:`Rewound`): the written entries hold their pre-forward values (an
  in-place entry a fresh clone of the copy, so a second rerun starts alike), and afterwards
  what the tables held just before the rerun is put back.  Swapping, not writing back: a
  write would bump the versions of tensors the rerun saved, which the reentrant inner
  backward checks.  Putting back what was there before the rerun (not the forward's values)
  keeps the writes of later regions that share the layer.
- Mutations the tables cannot show (a Python list appended to) are not seen.

A replay of a state that watched no forward (the planner's measurements, the MindSpore
layer's snapshots) is a sandbox instead (:class:`Sandbox`): the state entries of its
training-mode layers are fresh clones (only those a watched forward was seen to write, where
one was), and the buffer and parameter tables are put back afterwards (Python attributes are
left alone).
"""

from __future__ import annotations

import operator
import weakref

from .errors import RecomputeError
from .layers import _STATEFUL

__all__ = ["watch", "Watch", "Rewound", "Sandbox"]

_MISSING = object()
_FRESH = object()  # ``before`` of an entry the rerun writes to a fresh copy of (see NOTE)
_NONE: frozenset = frozenset()
_is = operator.is_
# layer -> {training flag: (entries written moving their version, entries written without)}
_LEARNED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _tables(layer) -> tuple:
    return (layer._buffers, layer._parameters, layer.__dict__)


def _state_entries(layer):
    """(table, name, tensor) of buffers and of parameters that get no gradient (Paddle's
    BatchNorm keeps ``_mean`` and ``_variance`` as such parameters).  A buffer that holds no
    memory (the ``rnn`` operator's dropout state on the CPU) has no value to put back."""
    for name, b in layer._buffers.items():
        if b is not None and b._is_initialized():
            yield layer._buffers, name, b
    for name, p in layer._parameters.items():
        if p is not None and p.stop_gradient:
            yield layer._parameters, name, p


class _Mark:
    """One layer at forward start.  (This runs per layer per region call: the tables are
    copied by C, and most layers have no state entries.)"""

    __slots__ = ("layer", "training", "snaps", "versions", "copies", "whole", "first", "fresh")

    def __init__(self, layer):
        attrs = layer.__dict__
        self.layer = layer
        self.training = attrs["training"]
        self.snaps = (dict(attrs["_buffers"]), dict(attrs["_parameters"]), dict(attrs))
        versions = [(table, name, t, t._inplace_version()) for table, name, t in _state_entries(layer)]
        self.versions = versions
        self.whole = bool(_STATEFUL) and isinstance(layer, tuple(_STATEFUL))
        self.copies = None
        self.first = False
        self.fresh = _NONE
        if versions:  # only state entries can need a copy of their pre-forward value
            learned = _LEARNED.get(layer)
            known = None if learned is None else learned.get(self.training)
            self.first = known is None
            if self.whole or self.first:
                self.copies = {(id(table), name): t.clone() for table, name, t, _ in versions}
            else:
                held, self.fresh = known
                if held:
                    self.copies = {(id(table), name): t.clone() for table, name, t, _ in versions
                                   if name in held}

    def learn(self, held: set, fresh: set) -> None:
        """Remember which entries this layer's forwards write in place (in this mode): by an
        operator that moves their version (``held``: copied at forward start) or by one that
        does not (``fresh``: the rerun writes to a copy of what the forward left)."""
        learned = _LEARNED.get(self.layer)
        if learned is None:
            learned = _LEARNED[self.layer] = {}
        known = learned.get(self.training)
        if known is None:
            learned[self.training] = (frozenset(held), frozenset(fresh))
        elif not (held <= known[0] and fresh <= known[1]):
            learned[self.training] = (known[0] | held, known[1] | fresh)

    def unchanged(self) -> bool:
        buffers, params, attrs = self.snaps
        layer = self.layer
        if not _same(layer._buffers, buffers) or not _same(layer._parameters, params):
            return False
        try:  # C compares by identity first; only a changed attribute meets ``==``
            if layer.__dict__ != attrs:
                return False
        except Exception:  # an ``==`` that does not give a bool (an array): changed
            return False
        for _, _, t, version in self.versions:
            if t._inplace_version() != version:
                return False
        return True

    def changes(self, out: list, unseen: list) -> None:
        """Append ``(table, name, before)`` for each entry the forward wrote."""
        layer = self.layer
        copies = self.copies or {}
        held, fresh = set(), set()
        for table, name, t, version in self.versions:
            copy = copies.get((id(table), name))
            moved = t._inplace_version() != version
            if copy is not None and (moved or self.whole or not self.first):
                held.add(name)
                out.append((table, name, _Copy(copy)))
            elif copy is not None and _differs(copy, t):  # first call, no version moved
                fresh.add(name)
                out.append((table, name, _FRESH))
            elif moved:  # not learned: no copy of the value before
                unseen.append(f"{type(layer).__name__}.{name}")
            elif name in self.fresh:
                fresh.add(name)
                out.append((table, name, _FRESH))
        tensors = held | fresh
        for table, snap in zip(_tables(layer), self.snaps, strict=True):
            for name in set(table) | set(snap):
                before = snap.get(name, _MISSING)
                if table.get(name, _MISSING) is not before and not (
                        name in tensors and table is not layer.__dict__):
                    out.append((table, name, before))
        if self.first or self.whole:
            self.learn(held, fresh)


def _same(table, snap: dict) -> bool:
    """Whether ``table`` holds the objects ``snap`` did (by identity: tensors' ``==`` is
    elementwise)."""
    return len(table) == len(snap) and (not snap or all(map(_is, table.values(), snap.values())))


def _differs(copy, t) -> bool:
    """Whether ``t`` holds other values than ``copy`` (bit for bit): Paddle's batch_norm
    writes its running statistics in place without moving their in-place version."""
    if copy.shape != t.shape or copy.dtype != t.dtype or not t._is_initialized():
        return True
    return copy.numpy().tobytes() != t.numpy().tobytes()


class _Copy:
    """The pre-forward value of an entry written in place; each rerun gets a fresh clone."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def watch(layers: list) -> Watch:
    """Mark ``layers`` at forward start; see NOTE [ Forward writes ]."""
    return Watch([_Mark(layer) for layer in layers])


class Watch:
    """The state of a region's layers at its forward start, then what its forward wrote."""

    __slots__ = ("marks", "written", "unseen")

    def __init__(self, marks: list):
        self.marks = marks
        self.written = None
        self.unseen = None

    def done(self) -> None:
        """After the forward: keep only what it wrote (and pre-forward values of those)."""
        written, unseen = [], []
        for mark in self.marks:
            if mark.copies or not mark.unchanged():
                mark.changes(written, unseen)
            elif mark.fresh:  # written only where no version shows (BatchNorm's statistics)
                written.extend((table, name, _FRESH) for table, name, _, _ in mark.versions
                               if name in mark.fresh)
            elif mark.first:
                mark.learn(_NONE, _NONE)
        self.marks = None
        self.written = written
        self.unseen = unseen

    def rewound(self, api: str) -> Rewound:
        """Context of a rerun: the written entries hold their pre-forward values."""
        if self.unseen:
            raise RecomputeError(
                f"{api}: the forward wrote {', '.join(sorted(set(self.unseen)))} in place, which "
                "the layer's earlier watched forwards did not write, so its value before the "
                "forward was not kept and the rerun cannot start from it. Declare the layer "
                "type with paddle_recompute.register_stateful_layer(cls), which keeps all its "
                "state at every forward, or keep the write out of the recomputed region.")
        return Rewound(self.written)


class Rewound:
    """Swaps pre-forward values in for the rerun, and back what was there afterwards."""

    __slots__ = ("written", "current")

    def __init__(self, written: list):
        self.written = written
        self.current = None

    def __enter__(self) -> Rewound:
        current = []
        try:
            for table, name, before in self.written:
                current.append((table, name, table.get(name, _MISSING)))
                if type(before) is _Copy:
                    before = before.value.clone()
                elif before is _FRESH:
                    before = current[-1][2].clone()
                _put(table, name, before)
        except BaseException:
            self.current = current
            self.__exit__()
            raise
        self.current = current
        return self

    def __exit__(self, *exc: object) -> None:
        for table, name, value in reversed(self.current):
            _put(table, name, value)
        self.current = None


class Sandbox:
    """Replay of a state that watched no forward: training-mode layers' state entries fresh
    clones, the buffer and parameter tables put back afterwards (NOTE [ Forward writes ])."""

    __slots__ = ("layers", "snaps")

    def __init__(self, layers: list):
        self.layers = layers
        self.snaps = None

    def __enter__(self) -> Sandbox:
        self.snaps = [(table, dict(table)) for layer in self.layers
                      for table in (layer._buffers, layer._parameters)]
        for layer in self.layers:
            if layer.training:
                known = _known_writes(layer)
                for table, name, t in list(_state_entries(layer)):
                    if known is None or name in known:
                        table[name] = t.clone()
        return self

    def __exit__(self, *exc: object) -> None:
        for table, snap in self.snaps:
            for name in [n for n in table if n not in snap]:
                del table[name]
            for name, value in snap.items():
                if table.get(name, _MISSING) is not value:
                    table[name] = value
        self.snaps = None


def _known_writes(layer):
    """Entries ``layer``'s watched forwards wrote in place (any mode), or None: not known, or
    a registered type (then all its entries)."""
    learned = _LEARNED.get(layer)
    if learned is None or (_STATEFUL and isinstance(layer, tuple(_STATEFUL))):
        return None
    return frozenset().union(*(held | fresh for held, fresh in learned.values()))


def _put(table: dict, name: str, value) -> None:
    if value is _MISSING:
        table.pop(name, None)
    else:
        table[name] = value
