"""Run compat/mindformers_scripts/qwen3_train.py counting forward calls and primitive runs.

    python -m paddle_mindspore _mindformers_qwen3_driver.py COUNTS.json qwen3_train.py [args]

The script itself runs unmodified as ``__main__``; before it starts, this driver wraps
``TransformerLayer.construct`` (and ``__init__``), the ``compute`` of the ``Mul``, ``SiLU``,
``Reshape``, ``RmsNorm`` and ``FlashAttentionScore`` primitives (class-wide, so a recompute
rerun in backward counts too), and the recompute marks (``Cell.recompute``,
``Primitive.recompute``, ``Primitive.add_prim_attr`` of ``recompute`` or
``recompute_comm_op``; a mark made inside another is not counted, as in
compat/record/mindformers_recompute_marks.py); it writes ``{"layers": n, "calls": c,
"runs": {primitive name: runs}, "marks": [{"name", "class", "method", "args", "kwargs"}]}`` to
COUNTS.json when the script ends. Primitives and marks are named by where they sit in the built
``TrainingQwen3ForCausalLM`` (its ``cells_and_names()``; a primitive as ``<cell name>.<attribute>``).
"""

from __future__ import annotations

import json
import os
import runpy
import sys

from mindformers.models.qwen3 import modeling_qwen3_train
from mindformers.parallel_core.training_graph.transformer import transformer_layer
from mindspore import nn
from mindspore.ops import Primitive
from mindspore.ops.auto_generate import Mul, Reshape, SiLU
from mindspore.ops.operations import RmsNorm
from mindspore.ops.operations.nn_ops import FlashAttentionScore

counts_path, script, *args = sys.argv[1:]
found = {"layers": 0, "calls": 0}
calls, nets, depth, runs = [], [], [0], {}


def wrap(owner, attr, before):
    original = getattr(owner, attr)

    def wrapper(self, *a, **kw):
        before(self, a)
        return original(self, *a, **kw)

    setattr(owner, attr, wrapper)


def marking(owner, attr, keep):
    original = getattr(owner, attr)

    def wrapper(self, *a, **kw):
        if depth[0] == 0 and keep(a):
            calls.append((self, attr, list(a), dict(kw)))
        depth[0] += 1
        try:
            return original(self, *a, **kw)
        finally:
            depth[0] -= 1

    setattr(owner, attr, wrapper)


def count(key):
    def before(self, a):
        found[key] += 1
    return before


def ran(self, a):
    runs[id(self)] = runs.get(id(self), 0) + 1


def names(net):
    named = {}
    for name, cell in net.cells_and_names():
        named.setdefault(id(cell), name)
        attrs = dict(vars(cell))
        attrs.update(getattr(cell, "_primitives", None) or {})
        for attr, value in attrs.items():
            if isinstance(value, Primitive):
                named.setdefault(id(value), f"{name}.{attr}" if name else attr)
    return named


wrap(transformer_layer.TransformerLayer, "construct", count("calls"))
wrap(transformer_layer.TransformerLayer, "__init__", count("layers"))
wrap(modeling_qwen3_train.TrainingQwen3ForCausalLM, "__init__", lambda self, a: nets.append(self))
for prim in (Mul, SiLU, Reshape, RmsNorm, FlashAttentionScore):
    wrap(prim, "compute", ran)
marking(nn.Cell, "recompute", lambda a: True)
marking(Primitive, "recompute", lambda a: True)
marking(Primitive, "add_prim_attr", lambda a: a and a[0] in ("recompute", "recompute_comm_op"))
sys.argv = [script, *args]
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
runpy.run_path(script, run_name="__main__")
named = names(nets[0])
found["marks"] = [{"name": named.get(id(obj), "<unreachable>"), "class": type(obj).__name__,
                   "method": attr, "args": a, "kwargs": kw} for obj, attr, a, kw in calls]
found["runs"] = {}
for key, n in runs.items():
    name = named.get(key, "<unreachable>")
    found["runs"][name] = found["runs"].get(name, 0) + n
with open(counts_path, "w") as f:
    json.dump(found, f)
