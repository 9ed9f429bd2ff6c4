"""Run compat/mindformers_scripts/glm2_train.py counting forward calls.

    python -m paddle_mindspore _mindformers_glm2_driver.py COUNTS.json glm2_train.py [args]

The script itself runs unmodified as ``__main__``; before it starts, this driver wraps
``ChatGLM2Block.construct`` (and ``__init__``), ``ChatGLM2SiLU.construct`` and the layer's
``nn.Softmax.construct`` (class-wide, so a recompute rerun in backward counts too), and
``Cell.recompute`` to note which classes' cells mindformers marks; it writes
``{"layers": n, "calls": c, "silu": s, "softmax": m, "marked": {class: count}}`` to
COUNTS.json when the script ends.
"""

from __future__ import annotations

import json
import os
import runpy
import sys

from mindformers.models.glm2 import glm2_modules, glm2_transformer
from mindspore import nn

counts_path, script, *args = sys.argv[1:]
found = {"layers": 0, "calls": 0, "silu": 0, "softmax": 0, "marked": {}}
_recompute = nn.Cell.recompute


def recompute(self, *a, **kw):
    name = type(self).__name__
    found["marked"][name] = found["marked"].get(name, 0) + 1
    return _recompute(self, *a, **kw)


def counting(cls, method, key):
    original = getattr(cls, method)

    def wrapper(self, *a, **kw):
        found[key] += 1
        return original(self, *a, **kw)

    setattr(cls, method, wrapper)


counting(glm2_transformer.ChatGLM2Block, "construct", "calls")
counting(glm2_transformer.ChatGLM2Block, "__init__", "layers")
counting(glm2_modules.ChatGLM2SiLU, "construct", "silu")
counting(nn.Softmax, "construct", "softmax")
nn.Cell.recompute = recompute
sys.argv = [script, *args]
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
runpy.run_path(script, run_name="__main__")
with open(counts_path, "w") as f:
    json.dump(found, f)
