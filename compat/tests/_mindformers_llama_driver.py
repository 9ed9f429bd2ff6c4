"""Run compat/mindformers_scripts/llama_train.py counting the decoder layers' forward calls.

    python -m paddle_mindspore _mindformers_llama_driver.py COUNTS.json llama_train.py [args]

The script itself runs unmodified as ``__main__``; before it starts, this driver wraps
``LLamaDecodeLayer.construct`` and the ``SiLU`` and ``Mul`` primitives' ``compute``
(class-wide, so a recompute replay in backward counts too), the recompute marks
(``Cell.recompute``, ``Primitive.recompute``, ``Primitive.add_prim_attr`` of ``recompute`` or
``recompute_comm_op``; a mark made inside another is not counted, as in
compat/record/mindformers_recompute_marks.py) and ``mindspore.value_and_grad``'s step function
(the peak of Paddle's host allocator during each step above what was allocated before it, when
``FLAGS_enable_host_memory_stat=1``; and the bytes still allocated when the network's forward
returns, the loss and what backward keeps, ``held_bytes``), and writes ``{"layers": n, "calls": c, "silu": s,
"mul": m, "marks": [{"name", "class", "method", "args", "kwargs"}], "step_peak_bytes": [..],
"held_bytes": [..], "mul_by_name": {primitive name: runs}}``
to COUNTS.json when the script ends. Marks are named by where they sit in the built
``LlamaForCausalLM`` (its ``cells_and_names()``; a primitive as ``<cell name>.<attribute>``).
"""

from __future__ import annotations

import json
import os
import runpy
import sys

import mindspore
from mindformers.models.llama import llama, llama_transformer
from mindspore import nn
from mindspore.ops import Primitive
from mindspore.ops.auto_generate import Mul, SiLU
from paddle.base import core

counts_path, script, *args = sys.argv[1:]
found = {"layers": 0, "calls": 0, "silu": 0, "mul": 0, "step_peak_bytes": [], "held_bytes": []}
calls, nets, depth, step_start, mul_by_id = [], [], [0], [0], {}
_construct = llama_transformer.LLamaDecodeLayer.construct
_init = llama_transformer.LLamaDecodeLayer.__init__
_net_init = llama.LlamaForCausalLM.__init__
_net_construct = llama.LlamaForCausalLM.construct
_silu = SiLU.compute
_mul = Mul.compute
_value_and_grad = mindspore.value_and_grad


def construct(self, *a, **kw):
    found["calls"] += 1
    return _construct(self, *a, **kw)


def init(self, *a, **kw):
    found["layers"] += 1
    _init(self, *a, **kw)


def net_init(self, *a, **kw):
    nets.append(self)
    _net_init(self, *a, **kw)


def net_construct(self, *a, **kw):
    out = _net_construct(self, *a, **kw)
    found["held_bytes"].append(core.host_memory_stat_current_value("Allocated", 0) - step_start[0])
    return out


def silu(self, *a, **kw):
    found["silu"] += 1
    return _silu(self, *a, **kw)


def mul(self, *a, **kw):
    found["mul"] += 1
    mul_by_id[id(self)] = mul_by_id.get(id(self), 0) + 1
    return _mul(self, *a, **kw)


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


def value_and_grad(*a, **kw):
    step = _value_and_grad(*a, **kw)

    def measured(*inputs):
        before = step_start[0] = core.host_memory_stat_current_value("Allocated", 0)
        core.host_memory_stat_reset_peak_value("Allocated", 0)
        out = step(*inputs)
        found["step_peak_bytes"].append(core.host_memory_stat_peak_value("Allocated", 0) - before)
        return out

    return measured


def names(net):
    named = {}
    for name, cell in net.cells_and_names():
        named.setdefault(id(cell), name)
        for attr, value in vars(cell).items():
            if isinstance(value, Primitive):
                named.setdefault(id(value), f"{name}.{attr}" if name else attr)
    return named


SiLU.compute = silu
Mul.compute = mul
llama_transformer.LLamaDecodeLayer.construct = construct
llama_transformer.LLamaDecodeLayer.__init__ = init
llama.LlamaForCausalLM.__init__ = net_init
llama.LlamaForCausalLM.construct = net_construct
marking(nn.Cell, "recompute", lambda a: True)
marking(Primitive, "recompute", lambda a: True)
marking(Primitive, "add_prim_attr", lambda a: a and a[0] in ("recompute", "recompute_comm_op"))
mindspore.value_and_grad = value_and_grad
sys.argv = [script, *args]
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
runpy.run_path(script, run_name="__main__")
named = names(nets[0])
found["marks"] = [{"name": named.get(id(obj), "<unreachable>"), "class": type(obj).__name__,
                   "method": attr, "args": a, "kwargs": kw} for obj, attr, a, kw in calls]
found["mul_by_name"] = {named.get(k, "<unreachable>"): n for k, n in mul_by_id.items()}
with open(counts_path, "w") as f:
    json.dump(found, f)
