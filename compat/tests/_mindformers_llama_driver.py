"""Run compat/mindformers_scripts/llama_train.py counting the decoder layers' forward calls.

    python -m paddle_mindspore _mindformers_llama_driver.py COUNTS.json llama_train.py [args]

The script itself runs unmodified as ``__main__``; before it starts, this driver wraps
``LLamaDecodeLayer.construct`` and the ``SiLU`` and ``Mul`` primitives' ``compute``
(class-wide, so a recompute replay in backward counts too) and writes
``{"layers": n, "calls": c, "silu": s, "mul": m}`` to COUNTS.json when the script ends.
"""

from __future__ import annotations

import json
import os
import runpy
import sys

from mindformers.models.llama import llama_transformer
from mindspore.ops.auto_generate import Mul, SiLU

counts_path, script, *args = sys.argv[1:]
found = {"layers": 0, "calls": 0, "silu": 0, "mul": 0}
_construct = llama_transformer.LLamaDecodeLayer.construct
_init = llama_transformer.LLamaDecodeLayer.__init__
_silu = SiLU.compute
_mul = Mul.compute


def construct(self, *a, **kw):
    found["calls"] += 1
    return _construct(self, *a, **kw)


def init(self, *a, **kw):
    found["layers"] += 1
    _init(self, *a, **kw)


def silu(self, *a, **kw):
    found["silu"] += 1
    return _silu(self, *a, **kw)


def mul(self, *a, **kw):
    found["mul"] += 1
    return _mul(self, *a, **kw)


SiLU.compute = silu
Mul.compute = mul
llama_transformer.LLamaDecodeLayer.construct = construct
llama_transformer.LLamaDecodeLayer.__init__ = init
sys.argv = [script, *args]
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
runpy.run_path(script, run_name="__main__")
with open(counts_path, "w") as f:
    json.dump(found, f)
