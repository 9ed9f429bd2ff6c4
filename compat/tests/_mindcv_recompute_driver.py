"""Run a mindcv script (train.py) with ``.recompute()`` on every block of ``network.features``.

    python -m paddle_mindspore _mindcv_recompute_driver.py COUNTS.json train.py [args]

train.py has no recompute option, so this driver wraps ``mindcv.models.create_model`` (which
train.py imports when it starts) to call MindSpore's ``Cell.recompute()`` on the model's
repeated blocks, then runs train.py itself, unmodified, as ``__main__``. It counts the calls
of the blocks' ``construct`` (class-wide, so a recompute replay counts too) and writes
``{"blocks": n, "calls": c}`` to COUNTS.json.
"""

from __future__ import annotations

import json
import os
import runpy
import sys

import mindcv.models

counts_path, script, *args = sys.argv[1:]
_create = mindcv.models.create_model
found = {"blocks": 0, "calls": 0}


def _counting(construct):
    def counted(self, *a, **kw):
        found["calls"] += 1
        return construct(self, *a, **kw)

    return counted


def create_model(*a, **kw):
    network = _create(*a, **kw)
    blocks = list(network.features)
    for cls in {type(block) for block in blocks}:
        cls.construct = _counting(cls.construct)
    for block in blocks:
        block.recompute()
    found["blocks"] = len(blocks)
    return network


mindcv.models.create_model = create_model
sys.argv = [script, *args]
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
runpy.run_path(script, run_name="__main__")
with open(counts_path, "w") as f:
    json.dump(found, f)
