"""Recompute options that act only across several devices: said once per process.

NOTE [ Options for several devices ]
MindSpore's ``Cell.recompute`` takes three keywords that concern parallel training:
``mp_comm_recompute`` (marks the cell's primitives ``recompute_comm_op``: recompute the
model-parallel communication it inserts), ``parallel_optimizer_comm_recompute`` (the optimizer
shard's all-gathers; MindSpore 2.10 itself only warns that zero3 replaced them) and
``recompute_slice_activation`` (marks the primitives ``slice_activation``: keep the region's
output sliced across model-parallel ranks). A primitive can be marked ``recompute_comm_op``
directly too (mindformers' ``select_comm_recompute``). On one device there is no communication
and a single rank, so none of them changes what is kept or rerun, in MindSpore or here: the
layer validates and records the options and says once per key that it has nothing to
act on, rather than staying silent.
"""

from __future__ import annotations

from . import log

__all__ = ["warn_once", "note_cell_options", "note_prim_attr"]

_WARNED: set[str] = set()
_WHY = {
    "mp_comm_recompute": "model-parallel communication operators are recomputed; one device has "
                         "no model-parallel communication",
    "parallel_optimizer_comm_recompute": "the optimizer shard's all-gathers are recomputed; one "
                                         "device has no optimizer shard",
    "recompute_slice_activation": "the region's kept output is sliced across model-parallel ranks; "
                                  "one device is a single rank, so nothing is sliced",
    "recompute_comm_op": "the communication operators of a primitive so marked (as mindformers' "
                         "select_comm_recompute marks its norms) are recomputed; one device has no "
                         "communication",
}


def warn_once(key: str) -> None:
    """Log, once per process, that the recompute option ``key`` does nothing on one device."""
    if key in _WARNED:
        return
    _WARNED.add(key)
    log.warning(f"recompute: '{key}' has no effect on one device ({_WHY[key]}); it is recorded "
                "and ignored, as MindSpore does on one device.")


def note_cell_options(options: dict) -> None:
    """``Cell.recompute(**options)``: say which parallel-only options were asked for."""
    for key, value in options.items():
        if key == "mp_comm_recompute" or value:
            warn_once(key)


def note_prim_attr(name: str, value) -> None:
    """``Primitive.add_prim_attr``: a ``recompute_comm_op`` mark set on."""
    if name == "recompute_comm_op" and value:
        warn_once(name)
