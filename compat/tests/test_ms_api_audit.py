"""``compat/api_audit.py``: what it counts as a referenced mindspore name, on a small tree
written here, and the names real MindSpore 2.10 lacks, from the recorded presence of mindcv's."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from _ms_cases import RECORDED
from _ms_helpers import COMPAT

_spec = importlib.util.spec_from_file_location("api_audit", COMPAT / "api_audit.py")
api_audit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(api_audit)

SOURCE = """
import random
import numpy as np
import mindspore as ms
from mindspore import ops, nn

def f(x, w):
    a = np.unique(w, return_counts=True)
    b = random.uniform(0, 1)
    c = np.arange(4).reshape(2, 2).repeat(2, 0)
    d = ops.eye(4).repeat(1, 3)
    e = x.unique()
    return ms.ms_function, nn.Dense, ops.concatcat, a, b, c, d, e
"""


def test_the_audit_counts_calls_on_tensors_and_not_on_other_libraries(tmp_path):
    (tmp_path / "m.py").write_text(SOURCE)
    rows = {r["name"]: r["provided"] for r in api_audit.audit(tmp_path)["rows"]}
    assert rows == {
        "mindspore": True, "mindspore.ops": True, "mindspore.nn": True, "mindspore.nn.Dense": True,
        "mindspore.ops.eye": True, "mindspore.ms_function": False, "mindspore.ops.concatcat": False,
        "Tensor.repeat": True, "Tensor.unique": False,
    }


def test_the_names_mindcv_references_that_the_layer_lacks_are_not_in_mindspore_either():
    """The recorded presence: every name the layer does not provide is one MindSpore 2.10 lacks
    too (it was written for older MindSpore versions, or is a typo)."""
    presence = json.loads((RECORDED / "mindcv_api_presence.json").read_text())
    assert presence["mindspore"] == "2.10.0"
    mindcv = importlib.util.find_spec("mindcv")  # its folder, not imported
    result = api_audit.audit(Path(mindcv.submodule_search_locations[0]))
    missing = {r["name"] for r in result["rows"] if not r["provided"]}
    absent = {n for n, p in presence["present"].items() if not p}
    assert missing == absent == {
        "mindspore.ms_function", "mindspore.ops.ResizeBilinear", "mindspore.ops.concatcat"}
    assert set(presence["present"]) == {r["name"] for r in result["rows"]}
