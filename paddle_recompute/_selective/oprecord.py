"""Records of one policy region's forward: operator calls, handles that can carry a value.

See NOTE [ Selective recompute ] in ``_selective/frame.py``.
"""

from __future__ import annotations

from .._core import ops
from .._core import tree as _tree
from .._core.errors import retains_graph
from .._core.identity import kept
from .._core.nonreentrant import Handle
from .._core.offload import to_place
from .._core.plain_saves import spent
from .._core.versions import modified_in_place

__all__ = ["KEPT", "INTERNAL", "FromInput", "FromOutput", "OpRecord", "KeepHandle", "Inputs",
           "position", "dead"]


class _Source:
    """Where a saved-tensor slot of one operator call comes from (``OpRecord.slots``).

    ``at_hand``: a rerun can fill the slot without running the operator.
    """

    __slots__ = ()
    at_hand = False


class _Kept(_Source):
    """The slot was kept in forward: its handle carries the value."""

    __slots__ = ()
    at_hand = True

    def __repr__(self) -> str:
        return "KEPT"


class _Internal(_Source):
    """Made inside the operator (neither an input nor an output): only running it gives it."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "INTERNAL"


class FromInput(_Source):
    """The operator's tensor input at ``position``: a rerun has it before the call."""

    __slots__ = ("position",)
    at_hand = True

    def __init__(self, position: int):
        self.position = position

    def __repr__(self) -> str:
        return f"FromInput({self.position})"


class FromOutput(_Source):
    """The operator's tensor output at ``position``: at hand only once that output is kept
    (the slot is then upgraded to ``KEPT``)."""

    __slots__ = ("position",)

    def __init__(self, position: int):
        self.position = position

    def __repr__(self) -> str:
        return f"FromOutput({self.position})"


KEPT = _Kept()
INTERNAL = _Internal()


def dead():
    return None  # stands in for the weakref of a kept slot: never "needed" by a rerun


class KeepHandle(Handle):
    """Handle of a policy region: carries the value itself when the slot was kept, and lets
    go of it once unpacked unless the backward retains the graph (NOTE [ Plain saves ] in
    ``_core/plain_saves.py``: Paddle holds what a pack hook returned until the graph is freed)."""

    __slots__ = ("value", "place", "version")

    def __init__(self, frame, index: int):
        super().__init__(frame, index)
        self.value = None
        self.place = None
        self.version = None

    def keep(self, tensor):
        """Carry ``tensor`` as ``identity.kept`` keeps it (itself, or a detached view with its
        ``stop_gradient``: NOTE [ Saved leaves ], NOTE [ No cycles ]) and, for a view, its
        in-place version; returns what it carries."""
        self.value = value = kept(tensor)
        self.version = None if value is tensor else tensor._inplace_version()
        return value

    def unpack(self):
        value = self.value
        if value is None:
            return self.frame.unpack(self.index)
        if value is _SPENT:
            raise spent()
        if self.version is not None and value._inplace_version() != self.version:
            # Paddle's check, which its hooked path skips (NOTE [ Plain saves ])
            raise modified_in_place(value._inplace_version(), self.version)
        if not retains_graph():
            self.value = _SPENT
        return value if self.place is None else to_place(value, self.place)


_SPENT = object()  # a kept slot's value after a backward that did not retain the graph


class Inputs:
    """The tensor inputs of one operator call, flattened on first use."""

    __slots__ = ("tree", "_leaves")

    def __init__(self, args, kwargs):
        self.tree = (args, kwargs)
        self._leaves = None

    def __call__(self) -> list:
        if self._leaves is None:
            self._leaves = _tree.tensors(self.tree)
        return self._leaves


def _same(a, b) -> bool:
    try:
        return a.data_ptr() == b.data_ptr() and a.shape == b.shape and a.dtype == b.dtype
    except RuntimeError:  # a tensor that holds no memory yet: rnn's DropoutState on the CPU
        return a is b


def position(tensor, tensors) -> int | None:
    for j, t in enumerate(tensors):
        if _same(tensor, t):
            return j
    return None


class OpRecord:
    """One operator call of the forward: its packed slots and, if kept, its outputs."""

    __slots__ = ("name", "first", "pending", "slots", "spec", "out_refs", "held", "places",
                 "flags", "versions", "input_shapes", "rng", "skippable", "mask", "remake",
                 "written", "dead", "out_meta", "occurrence")

    def __init__(self, name: str, first: int):
        self.name = name
        self.occurrence = 0  # its number among the region's calls of ``name``, from 0
        self.first = first
        self.pending = []
        self.rng = None
        self.skippable = False
        self.mask = None  # dropout's kept mask (value, host place or None), and how to rebuild
        # its output from it (NOTE [ Dropout mask replay ] in _selective/dropout_replay.py)
        self.remake = None
        self.written = False  # an offloaded output was changed in place later in forward
        self.dead = False  # a rerun need not run it (NOTE [ Dead operators ] in liveness.py)
        self.out_meta = ()  # (shape, dtype, place) of each output, for a dead one's stand-ins

    def update_skippable(self) -> None:
        # An in-place operator saved its input after changing it: the rerun's input holds
        # the value before, so such an operator always runs.
        self.skippable = (not self.name.endswith("_") and all(h is not None for h in self.held)
                          and all(s.at_hand for s in self.slots)
                          and (self.rng is not None or not ops.draws_random(self.name)))

    def stops_before_running(self, last: int) -> bool:
        """True when slot ``last`` is this operator's and every slot up to it is an input or
        kept: a rerun that stops there has what it needs without running the operator."""
        upto = last - self.first
        if not 0 <= upto < len(self.slots):
            return False
        return all(s.at_hand for s in self.slots[:upto + 1])

    def rebuildable(self) -> bool:
        """A dropout whose mask alone was kept: its output can be rebuilt without the kernel."""
        return (self.remake is not None and self.rng is not None
                and all(s.at_hand for s in self.slots))

    def rebuild(self, args: tuple):
        """Dropout's output from the rerun's ``args`` and the kept mask (None: run the kernel)."""
        value, place = self.mask
        out = self.remake.rebuild(args, value if place is None else to_place(value, place))
        if out is None:
            return None
        out.stop_gradient = self.flags[0]
        self.rng.apply()  # where running the operator would have left the generators
        return _tree.unflatten(self.spec, [out])

    def unchanged(self) -> bool:
        """Kept outputs not modified in place since the forward: device ones by their version,
        offloaded ones by the in-place operators the forward ran on them."""
        if self.written:
            return False
        for t, version, place in zip(self.held, self.versions, self.places, strict=True):
            if place is None and t._inplace_version() != version:
                return False
        return True

    def stand_ins(self, make) -> tuple:
        """(outputs, stand-ins) of a dead operator: each kept output as ``replay`` gives it,
        else ``make(meta)`` (``(shape, dtype, place)``, or None for an output that held no
        data); ``stand-ins`` lists the made ones."""
        out, made = [], []
        for t, flag, place, meta in zip(self.held, self.flags, self.places, self.out_meta, strict=True):
            if t is not None:
                d = (t if place is None else to_place(t, place)).detach()
            else:
                d = make(meta)
                made.append(d)
            d.stop_gradient = flag
            out.append(d)
        if self.rng is not None:
            self.rng.apply()  # where running the operator would have left the generators
        return _tree.unflatten(self.spec, out), made

    def replay(self):
        out = []
        for t, flag, place in zip(self.held, self.flags, self.places, strict=True):
            d = (t if place is None else to_place(t, place)).detach()  # never hand out the held one
            d.stop_gradient = flag  # what follows must save (and pack) as in forward
            out.append(d)
        if self.rng is not None:
            self.rng.apply()  # where running the operator would have left the generators
        return _tree.unflatten(self.spec, out)
