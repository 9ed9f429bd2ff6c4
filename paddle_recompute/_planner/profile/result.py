"""What :func:`paddle_recompute.planner.profile` returns: per-layer rows, a table and JSON."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields

from .files import damaged, read_saved, version_stamp

__all__ = ["SavedTensor", "LayerProfile", "CallProfile", "Profile", "register_op_profile_codec"]

_MiB = 1024 * 1024


@dataclass
class SavedTensor:
    """One tensor saved for backward: the layer and op that saved it, the op that produced
    it (the ``paddle._C_ops`` operator: ``"matmul"``, ``"softmax"``...; ``""`` for a leaf
    or a tensor made outside ``_C_ops``, such as ``x + y``),
    its shape, dtype and bytes."""

    layer: str
    op: str
    shape: tuple
    dtype: str
    nbytes: int
    producer: str = ""


@dataclass
class LayerProfile:
    """One sublayer (or block) over the profiled forward.

    ``saved_bytes`` counts the tensors saved for backward while the layer ran (its
    sublayers included), ``self_bytes`` those saved outside any of its sublayers; when a
    block saves one of its inputs that an earlier layer saved too, the block owns it (whether
    it stays alive depends on the block).  ``input_bytes`` are the tensor arguments not alive
    anyway (what a recompute region around the layer keeps), ``output_bytes`` the tensor
    results; times are seconds
    summed over the layer's calls (median over the repeats).  ``recompute_s`` is the time
    of a re-run of the layer's forward with grad enabled (what recompute pays in backward);
    it is measured for blocks and their direct sublayers, else ``None``.  It is the cost of
    the rerun alone: a training step can grow by less, because activations that are not
    kept also cost less memory traffic (measured on the CPU GPT benchmark: a rerun of the
    MLP sublayer takes ~65 ms in backward, the step grows by ~30 ms per block).
    """

    name: str
    type: str
    depth: int
    calls: int = 0
    saved_bytes: int = 0
    self_bytes: int = 0
    input_bytes: int = 0
    output_bytes: int = 0
    forward_s: float = 0.0
    recompute_s: float | None = None
    is_block: bool = False
    children: list[str] = field(default_factory=list)


@dataclass
class CallProfile:
    """One call of a layer over the profiled forward (a layer called three times, shared
    weights, has three; see NOTE [ Region tree ] in ``_planner/solvers/tree.py``).

    ``id`` is the layer's name, with ``@k`` appended for its k-th call (k >= 1, in call
    order); ``parent`` the id of the call it ran in (``None``: called from outside every
    layer); ``children`` the calls made inside it, in order.  ``saved_bytes``: the tensors
    saved for backward whose every save ran inside this call (what a region around it
    frees); ``self_bytes``: of those, the ones no single child call holds all saves of;
    ``input_bytes``: what such a region adds by holding its inputs (inputs that a layer
    outside it saves are held anyway and not counted).  ``forward_s`` and ``recompute_s``
    are the call's forward and the re-run of it, in seconds (medians over the repeats).
    ``shared_bytes``: ``(first, last, bytes)``, part of ``self_bytes`` saved only by its
    children ``first..last`` (positions in ``children``), several of them.  ``chained[i]``:
    child ``i + 1`` took child ``i``'s output as its sole argument with no operator run
    between them, so a run of chained children can be one region (NOTE [ Region tree ]).
    """

    id: str
    layer: str
    index: int
    parent: str | None
    saved_bytes: int = 0
    self_bytes: int = 0
    input_bytes: int = 0
    forward_s: float = 0.0
    recompute_s: float = 0.0
    children: list[str] = field(default_factory=list)
    shared_bytes: list[tuple[int, int, int]] = field(default_factory=list)
    chained: list[bool] = field(default_factory=list)  # per pair of adjacent children
    saves: int = 0  # tensors saved inside the call (each save): what a region around it packs


@dataclass
class Profile:
    """Result of :func:`paddle_recompute.planner.profile`.

    ``total_bytes``: every tensor saved for backward by the forward, counted once, without
    parameters, buffers and the inputs (alive anyway).  ``outside_bytes``: the part saved
    outside the blocks (held whatever is recomputed).  ``layers`` maps qualified names
    (``""`` is the root) to rows; ``blocks`` lists the block names in call order.
    ``step_costs`` (block -> option -> seconds) holds what ``plan(..., calibrate=n)``
    measured, and ``policy_costs`` (block -> option -> (bytes, seconds)) what ``plan``
    measured of its policy options, ``op_profiles`` (block -> ``OpProfile``) the operator
    graphs of the operator-level option; later plans on this profile reuse them.  ``calls``
    holds one :class:`CallProfile` per call of a layer, the tree the planner picks
    regions from.
    """

    total_bytes: int
    forward_s: float
    layers: dict[str, LayerProfile]
    blocks: list[str]
    saved: list[SavedTensor]
    repeats: int
    step_costs: dict[str, dict[str, float]] = field(default_factory=dict)  # see calibrate
    # block -> policy option kind -> (bytes held, rerun seconds), None where its run failed:
    # see _planner/options/policies.py
    policy_costs: dict[str, dict[str, tuple | None]] = field(default_factory=dict)
    # block -> OpProfile (its operator graph): see _planner/options/op_profile.py
    op_profiles: dict = field(default_factory=dict)
    calls: dict[str, CallProfile] = field(default_factory=dict)  # call id -> row, in call order
    region_s: float | None = None  # a region's own cost per step: see _planner/options/region_overhead.py
    save_s: float = 0.0  # and its cost per tensor saved inside it (same file)
    # (bytes, blocks) of inputs several blocks take: NOTE [ Shared block inputs ] in profile/measure.py
    shared_inputs: list = field(default_factory=list)
    # (bytes, calls) of inputs several calls count: NOTE [ Shared call inputs ] in plan/shared_inputs.py
    shared_call_inputs: list = field(default_factory=list)
    # what it was measured on (NOTE [ Saved structure ] in profile/files.py)
    structure: dict | None = None

    @property
    def outside_bytes(self) -> int:
        return self.total_bytes - sum(self.layers[b].saved_bytes for b in self.blocks)

    def shared_input_credit(self, regions) -> int:
        """Bytes counted more than once when regions around the blocks ``regions`` each count
        the inputs they share, which they hold once (NOTE [ Shared block inputs ] in
        ``profile/measure.py``)."""
        around = set(regions)
        return sum(n * max(len(around.intersection(takers)) - 1, 0) for n, takers in self.shared_inputs)

    def block_profiles(self) -> list[LayerProfile]:
        """The rows of the blocks, in call order."""
        return [self.layers[b] for b in self.blocks]

    def to_dict(self) -> dict:
        """Plain data (JSON-serialisable)."""
        out = asdict(self)
        out["outside_bytes"] = self.outside_bytes
        return out

    def to_json(self, **kwargs) -> str:
        """:meth:`to_dict` as a JSON string (``kwargs`` go to ``json.dumps``)."""
        return json.dumps(self.to_dict(), **kwargs)

    def save(self, path: str | os.PathLike) -> None:
        """Write the profile to ``path`` as JSON; :meth:`load` reads it back, and
        ``plan(model, *inputs, profile=Profile.load(path))`` plans on it without profiling.

        The operator graphs of the ``ops`` option (``op_profiles``, each graph once however
        many units share it) and their measured points are written too, so a plan on the
        loaded profile neither records nor measures them again.

        Example:
            >>> prof.save("profile.json")  # doctest: +SKIP
        """
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "op_profiles"}
        out = asdict(Profile(**{**out, "op_profiles": {}}))
        del out["op_profiles"]
        if self.op_profiles and _OP_CODEC:
            graphs: dict = {}  # id -> (index, OpProfile): units alike share one
            out["op_profiles"] = {unit: graphs.setdefault(id(op), (len(graphs), op))[0]
                                  for unit, op in self.op_profiles.items()}
            out["op_graphs"] = [_OP_CODEC[0](op) for _, op in graphs.values()]
        else:  # the ``ops`` points mean nothing without their graphs
            out["policy_costs"] = {b: {k: v for k, v in costs.items() if not k.startswith(_OPS)}
                                   for b, costs in self.policy_costs.items()}
        with open(path, "w") as fh:
            json.dump({"format": _FORMAT, **version_stamp(), **out}, fh, indent=1)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Profile:
        """A profile written by :meth:`save`.  ``plan(..., profile=...)`` checks that it was
        made on a model and inputs like the ones it plans for.

        Raises:
            ValueError: the file is not JSON, is cut short, is not a saved profile, or is
                damaged.  Warns (``UserWarning``) when it was made with another Paddle version.
        """
        data = read_saved("Profile.load", path, _FORMAT, "Profile")
        try:
            return _from_dict(data)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise damaged("Profile.load", path, exc) from None

    def table(self, max_depth: int | None = None) -> str:
        """A readable table: one row per layer, indented by depth, blocks marked ``*``."""
        lines = [f"{'layer':<40} {'calls':>5} {'saved MiB':>10} {'self MiB':>9} "
                 f"{'in MiB':>7} {'fwd ms':>8} {'recomp ms':>9}"]
        for row in self.layers.values():
            if max_depth is not None and row.depth > max_depth:
                continue
            label = ("  " * row.depth + (row.name.rsplit(".", 1)[-1] or "<root>")
                     + f" ({row.type})" + (" *" if row.is_block else ""))
            recompute = "" if row.recompute_s is None else f"{1e3 * row.recompute_s:9.2f}"
            lines.append(f"{label[:40]:<40} {row.calls:>5} {row.saved_bytes / _MiB:>10.2f} "
                         f"{row.self_bytes / _MiB:>9.2f} {row.input_bytes / _MiB:>7.2f} "
                         f"{1e3 * row.forward_s:>8.2f} {recompute:>9}")
        lines.append(f"total saved for backward: {self.total_bytes / _MiB:.2f} MiB "
                     f"({self.outside_bytes / _MiB:.2f} MiB outside {len(self.blocks)} blocks); "
                     f"forward {1e3 * self.forward_s:.2f} ms; medians of {self.repeats} runs")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


_FORMAT = "paddle_recompute.profile/1"
_OPS = "ops:"  # the ``ops`` option's points in policy_costs (options/ops.py)
# (dump, load) of an ``OpProfile`` as plain data: registered by ``options/op_profile.py``,
# which defines it above this layer
_OP_CODEC: list = []


def register_op_profile_codec(dump, load) -> None:
    """How :meth:`Profile.save` writes an operator graph (``dump(op_profile) -> dict``) and
    :meth:`Profile.load` reads it back (``load(dict) -> op_profile``)."""
    _OP_CODEC[:] = [dump, load]


def _from_dict(data: dict) -> Profile:
    names = {f.name for f in fields(Profile)} - {"op_profiles"}
    given = {k: data[k] for k in names if k in data}
    for k in ("total_bytes", "forward_s", "layers", "blocks", "saved", "repeats"):
        if k not in data:
            raise KeyError(k)
    given["layers"] = {n: LayerProfile(**row) for n, row in data["layers"].items()}
    given["saved"] = [SavedTensor(**{**t, "shape": tuple(t["shape"])}) for t in data["saved"]]
    given["calls"] = {c: CallProfile(**{**row, "shared_bytes": [tuple(s) for s in row["shared_bytes"]]})
                      for c, row in data.get("calls", {}).items()}
    given["policy_costs"] = {b: {k: None if v is None else tuple(v) for k, v in costs.items()}
                             for b, costs in data.get("policy_costs", {}).items()}
    given["shared_inputs"] = [(int(n), tuple(names)) for n, names in data.get("shared_inputs", ())]
    given["shared_call_inputs"] = [(int(n), tuple(c)) for n, c in data.get("shared_call_inputs", ())]
    if "op_graphs" in data and _OP_CODEC:
        graphs = [_OP_CODEC[1](g) for g in data["op_graphs"]]
        given["op_profiles"] = {unit: graphs[i] for unit, i in data["op_profiles"].items()}
    else:  # saved without graphs: their points are recorded and measured again
        given["policy_costs"] = {b: {k: v for k, v in costs.items() if not k.startswith(_OPS)}
                                 for b, costs in given["policy_costs"].items()}
    return Profile(**given)
