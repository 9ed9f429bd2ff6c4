"""Which cells and primitives mindformers marks for recompute while it builds a network, read
from real MindSpore 2.10 (for compat/record/record_mindformers_glm2.py and
record_mindformers_qwen3.py).

``marks(build, variant)`` wraps ``Cell.recompute``, ``Primitive.recompute`` and
``Primitive.add_prim_attr("recompute" or "recompute_comm_op", ...)`` (the public ways to mark;
MindSpore's own ``Cell._recompute`` spreading a mark to sub-cells is left out) while
``build(variant)`` runs, then names each marked object by where it sits in the built network: a
cell by its name in ``cells_and_names()`` (``""`` for the network itself), a primitive as
``<cell name>.<attribute>``. Marks on objects that are not reachable that way (a primitive built
and thrown away) are counted under ``"<unreachable>"``.
"""

from __future__ import annotations

from collections import Counter

from mindspore import nn
from mindspore.ops import Primitive


def _patched(calls):
    originals = {}
    depth = [0]  # marks made inside another wrapped call (recompute -> add_prim_attr) are not recorded

    def wrap(owner, attr, kind, keep):
        original = getattr(owner, attr)
        originals[(owner, attr)] = original

        def wrapper(self, *args, **kwargs):
            if depth[0] == 0 and keep(args, kwargs):
                calls.append((self, kind, attr, _plain(args), _plain(kwargs)))
            depth[0] += 1
            try:
                return original(self, *args, **kwargs)
            finally:
                depth[0] -= 1

        setattr(owner, attr, wrapper)

    wrap(nn.Cell, "recompute", "cell", lambda a, k: True)
    wrap(Primitive, "recompute", "primitive", lambda a, k: True)
    marks_attr = ("recompute", "recompute_comm_op")
    wrap(Primitive, "add_prim_attr", "primitive", lambda a, k: a and a[0] in marks_attr)
    return originals


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value if isinstance(value, (bool, int, float, str, type(None))) else repr(value)


def _names(net):
    names = {}
    for name, cell in net.cells_and_names():
        names.setdefault(id(cell), name)
        attrs = dict(vars(cell))
        attrs.update(getattr(cell, "_primitives", {}) or {})
        for attr, value in attrs.items():
            if isinstance(value, Primitive):
                names.setdefault(id(value), f"{name}.{attr}" if name else attr)
    return names


def marks(build, variant):
    """Build the network for ``variant`` and return its recompute marks (see the module doc)."""
    calls = []
    originals = _patched(calls)
    try:
        net = build(variant)
    finally:
        for (owner, attr), original in originals.items():
            setattr(owner, attr, original)
    names = _names(net)
    listed, counts = [], Counter()
    for obj, kind, method, args, kwargs in calls:
        name = names.get(id(obj), "<unreachable>")
        listed.append({"name": name, "kind": kind, "class": type(obj).__name__,
                       "method": method, "args": args, "kwargs": kwargs})
        counts[f"{kind}.{method}"] += 1
    return {"marks": listed, "counts": dict(sorted(counts.items())), "net": net}
