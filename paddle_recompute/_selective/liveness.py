"""Which operators a policy region's rerun can leave out: those no needed tensor depends on.

NOTE [ Dead operators ]: the rerun of a policy region replays the forward's Python up to
the last saved tensor backward needs (NOTE [ Selective recompute ] in ``frame.py``).  Of the
operators it passes, only the *ancestors* of the saved tensors it must rebuild have to
run.  So in forward the region records, per operator call, where each tensor input came
from (:class:`Lineage`): the output ``j`` of an earlier operator of the region (matched by
the tensor object, still alive, at the in-place version it had when that operator
returned), a region input or a parameter (``EXTERNAL``: real in the rerun), or anything else
(``UNKNOWN``: made by code the region does not observe, such as a comparison ``x > 0``, or
changed in place by it).  When the forward ends, :func:`dead_ops` marks as *live*:

* the operator that packed a needed slot it made itself (its output or an internal
  result), and the maker of a needed slot that is one of an operator's inputs;
* operators that must run whatever follows: in-place ones (they write into buffers others
  may read through views), random ones the region holds no RNG snapshot for, ones with a
  data-dependent output shape (``nonzero``, ``masked_select``, ``unique``...), ones with no
  tensor output, and those whose outputs Python read (``.item()``, ``.numpy()``, ``bool(t)``,
  ``int(t)``...: ``Lineage.read``, through NOTE [ Tensor operators ]'s read wrappers);
* the makers of every input of a live operator that runs (an operator the rerun skips
  because its outputs were kept needs no inputs beyond its needed slots);
* every operator before a point where a tensor of ``UNKNOWN`` origin mattered: an input of
  a live operator, a needed slot, a value Python read, or a slot packed outside any
  operator (when unsure, the whole prefix runs, as without this analysis).

Every other operator the rerun passes is *dead*: the rerun does not call it, fills the
slots it packed as its pack calls would have (only inputs can be needed), applies its RNG
snapshot when it draws random numbers, and returns stand-ins (``_C_ops.empty`` of the
recorded shape, dtype and place, or the kept output where there is one).  A stand-in must
never reach an operator that runs, a needed slot or a Python read: the rerun checks every
operator it runs, every slot it stores and every read against the stand-ins still alive,
and raises ``RecomputeError`` instead of computing a wrong gradient.  Once the rerun meets an
operator other than the recorded one it runs every operator after it.  Python state the
region's code writes during the rerun (an attribute or a global caching an intermediate)
would hold a stand-in afterwards: a stand-in still alive when the rerun has ended can only be
held there, so the frame then reruns once more running every operator, which writes the real
value, and warns (NOTE [ Escaped stand-ins ] in ``frame.py``).
"""

from __future__ import annotations

import functools
import re
import weakref

from .._core import ops as _ops
from .oprecord import FromInput

__all__ = ["Lineage", "EXTERNAL", "UNKNOWN", "dead_ops", "shape_depends_on_values"]

EXTERNAL = -1  # a region input or a parameter: the rerun has its real value
UNKNOWN = -2  # not made by an observed operator of this region: anything before may matter

_DATA_SHAPE = re.compile(r"nonzero|masked_select|unique|where_index|masked_scatter|boolean_mask|"
                         r"repeat_interleave|bincount|histogram|edit_distance|ctc|nms|topk_v2_dynamic")


@functools.lru_cache(maxsize=4096)
def shape_depends_on_values(op: str) -> bool:
    """True when operator ``op``'s output shape may depend on its input values (always run;
    asked once per observed operator call, so answered from a cache)."""
    return _DATA_SHAPE.search(op) is not None


class Lineage:
    """Where each observed operator's tensor inputs came from; see NOTE [ Dead operators ].

    ``sources[k]``: per tensor input of operator ``k`` (flattened as ``oprecord.Inputs``), the
    index of the operator that made it, ``EXTERNAL`` or ``UNKNOWN``.  ``forced``: operators
    that must run when reached.  ``floor``: every operator before it must run.
    """

    __slots__ = ("made", "inputs", "sources", "forced", "floor", "outside")

    def __init__(self, leaves):
        self.made = {}  # id(tensor) -> (operator, weak ref, in-place version when made)
        self.inputs = {id(t): (weakref.ref(t), t._inplace_version()) for t in leaves}
        self.sources: list[list[int]] = []
        self.forced: set[int] = set()
        self.floor = 0
        self.outside: list[tuple[int, int]] = []  # (slot index, operators before it)

    def source(self, t) -> int:
        """Where tensor ``t`` came from: an operator index, ``EXTERNAL`` or ``UNKNOWN``."""
        entry = self.made.get(id(t))
        if entry is not None and entry[1]() is t:
            return entry[0] if t._inplace_version() == entry[2] else UNKNOWN
        if t.persistable:
            return EXTERNAL
        entry = self.inputs.get(id(t))
        if entry is not None and entry[0]() is t and t._inplace_version() == entry[1]:
            return EXTERNAL
        return UNKNOWN

    def operator(self, k: int, name: str, inputs: list, outputs: list, rng: bool) -> None:
        """Operator ``k`` ran on ``inputs`` and made ``outputs``; ``rng``: a snapshot of the
        random state after it is held (a random operator can then be left out)."""
        self.sources.append([self.source(t) for t in inputs])
        if (name.endswith("_") or not outputs or shape_depends_on_values(name)
                or (not rng and _ops.draws_random(name))):
            self.forced.add(k)
        for t in outputs:
            self.made[id(t)] = (k, weakref.ref(t), t._inplace_version())

    def read(self, t, ops_so_far: int) -> None:
        """Python read the values of ``t`` (``.item()``, ``bool(t)``...)."""
        src = self.source(t)
        if src >= 0:
            self.forced.add(src)
        elif src == UNKNOWN:
            self.floor = max(self.floor, ops_so_far)

    def packed_outside(self, index: int, ops_so_far: int) -> None:
        """Slot ``index`` was packed outside any observed operator (its value's origin is unknown)."""
        self.outside.append((index, ops_so_far))


def dead_ops(ops: list, lineage: Lineage, needed, stop: int) -> list[int]:
    """Positions of the operators before ``stop`` that a rerun for the slots ``needed`` (a
    predicate on slot indices) need not run; see NOTE [ Dead operators ]."""
    stop = min(stop, len(lineage.sources))
    live = [False] * stop
    floor = lineage.floor
    for index, before in lineage.outside:
        if needed(index):
            floor = max(floor, before)
    for k in lineage.forced:
        if k < stop:
            live[k] = True
    for k in range(stop):
        op = ops[k]
        for i, source in enumerate(op.slots):
            if not needed(op.first + i):
                continue
            if isinstance(source, FromInput):
                src = lineage.sources[k][source.position]
                if src >= 0:
                    live[src] = True
                elif src == UNKNOWN:
                    floor = max(floor, k)
            else:
                live[k] = True
    for k in range(stop - 1, -1, -1):
        if k < floor:
            break
        op = ops[k]
        if not live[k] or (op.skippable and op.unchanged()):
            continue  # dead, or replayed from its kept outputs: its inputs are not needed
        for src in lineage.sources[k]:
            if src >= 0:
                live[src] = True
            elif src == UNKNOWN:
                floor = max(floor, k)
    return [k for k in range(floor, stop) if not live[k]]
