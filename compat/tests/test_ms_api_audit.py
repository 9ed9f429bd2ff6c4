"""``compat/api_audit.py``: what it counts as a referenced mindspore name and as a method call on
a cell or a primitive, on small trees written here; the names real MindSpore 2.10 lacks, from
the recorded presence of mindcv's; and that the layer's README quotes the counts it finds now
over the installed mindformers and mindcv (read from their folders, not imported)."""

from __future__ import annotations

import json
import sys

import pytest
from _ms_cases import RECORDED
from _ms_helpers import COMPAT

sys.path.insert(0, str(COMPAT))
import api_audit  # noqa: E402 - compat/api_audit.py, a script beside its helpers
import api_audit_readme  # noqa: E402

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


@pytest.fixture(scope="module")
def counted():
    """The README's audits: mindformers (whole, and the Llama import path), mindcv."""
    return api_audit_readme.results()


def test_the_names_mindcv_references_that_the_layer_lacks_are_not_in_mindspore_either(counted):
    """The recorded presence: every module-level name and Tensor method the layer does not
    provide is one MindSpore 2.10 lacks too (it was written for older MindSpore versions, or is
    a typo); MindSpore has every Cell / Primitive method mindcv calls."""
    presence = json.loads((RECORDED / "mindcv_api_presence.json").read_text())
    assert presence["mindspore"] == "2.10.0"
    result = list(counted.values())[2]
    missing = {r["name"] for r in result["rows"] if not r["provided"] and r["kind"] in ("api", "tensor")}
    absent = {n for n, p in presence["present"].items() if not p}
    assert missing == absent == {
        "mindspore.ms_function", "mindspore.ops.ResizeBilinear", "mindspore.ops.concatcat"}
    assert set(presence["present"]) == {r["name"] for r in result["rows"]}


PLANTED = """
import numpy as np
from mindspore import nn, mint
from layers import Norm
from mindspore.ops import operations as P
import mindspore.ops as ops


class Block(nn.Cell):
    def __init__(self, cell):
        super().__init__()
        self.matmul = P.MatMul()
        self.add = P.Add().shard(((1, 1), ())).add_prim_attr("keep_alive", True)
        self.own = Own()
        self.cell = cell
        self.matmul.shard(((2, 1), (1, 1)))
        self.own.shard(4)
        self.set_comm_fusion(2)
        self.cell.recompute()
        Norm().set_comm_fusion(3)
        np.ones(3).shard()

    def construct(self, x, optimizer):
        optimizer.state_dict()
        return ops.operations.PlantedMissingOp()(x.to(np.float32)), mint.planted_missing_fn, P.MatMul


class Own(nn.Cell):
    def shard(self, n):
        self.set_inputs(n)
"""


def test_the_audit_finds_planted_missing_names_and_method_calls(tmp_path, monkeypatch):
    """Names through ``P.X``, ``ops.operations.X``, ``mint.x``; method calls on a primitive
    (``P.Add().shard(...)``, ``self.matmul.shard(...)`` after ``self.matmul = P.MatMul()``), on a
    cell (``self.set_comm_fusion``, ``Norm().set_comm_fusion``: a Cell subclass another file of
    the tree defines, imported) and on an unknown receiver (``self.cell.recompute()``: counted,
    unsure, for Cell and Primitive); not the tree's own ``shard``, numpy's, an optimizer's
    ``state_dict`` or a Tensor's ``to``. ``Primitive.shard`` is taken away from the layer here, so
    the audit must report it missing whether or not the layer has it."""
    from paddle_mindspore import nn, ops

    monkeypatch.delattr(ops.Primitive, "shard", raising=False)
    (tmp_path / "m.py").write_text(PLANTED)
    (tmp_path / "layers.py").write_text("from mindspore import nn\n\nclass Norm(nn.Cell):\n    pass\n")
    rows = {r["name"]: r for r in api_audit.audit(tmp_path)["rows"]}
    names = {n: r["provided"] for n, r in rows.items() if r["kind"] == "api"}
    assert names["mindspore.ops.operations.PlantedMissingOp"] is False
    assert names["mindspore.mint.planted_missing_fn"] is False
    assert names["mindspore.ops.operations.MatMul"] is True
    methods = {n: (r["provided"], r["calls"], r["unsure"]) for n, r in rows.items() if "calls" in r}
    assert methods == {
        "Primitive.shard": (False, {"m.py": 2}, {}),
        "Primitive.add_prim_attr": (True, {"m.py": 1}, {}),
        "Cell.set_comm_fusion": (hasattr(nn.Cell, "set_comm_fusion"), {"m.py": 2}, {}),
        "Cell.set_inputs": (hasattr(nn.Cell, "set_inputs"), {"m.py": 1}, {}),
        "Cell.recompute": (True, {}, {"m.py": 1}),
        "Primitive.recompute": (True, {}, {"m.py": 1}),
    }


def test_a_method_counts_as_provided_once_the_layer_has_it(tmp_path, monkeypatch):
    from paddle_mindspore import ops

    monkeypatch.setattr(ops.Primitive, "shard", lambda self, strategy: self, raising=False)
    (tmp_path / "m.py").write_text("from mindspore.ops import operations as P\nP.Add().shard(((1,), (1,)))\n")
    rows = {r["name"]: r for r in api_audit.audit(tmp_path)["rows"]}
    assert rows["Primitive.shard"]["provided"] is True and rows["Primitive.shard"]["calls"] == {"m.py": 1}


def test_a_stand_in_that_only_lets_a_module_import_counts_as_missing(tmp_path):
    """Names the layer defines only so that a package imports (they raise ``MissingAPIError``
    when constructed, called or read) are missing to the audit: a class, a function and an
    object stand-in each, beside a name the layer really provides."""
    from paddle_mindspore import runtime
    from paddle_mindspore.ops.auto_generate import gen_ops_prim

    with pytest.raises(AttributeError):
        runtime.synchronize()
    with pytest.raises(AttributeError):
        gen_ops_prim.Chunk()
    (tmp_path / "m.py").write_text(
        "import mindspore\nfrom mindspore.ops.auto_generate import Chunk, Gather\n"
        "mindspore.runtime.synchronize()\nChunk()\nGather()\n"
    )
    names = {r["name"]: r["provided"] for r in api_audit.audit(tmp_path)["rows"] if r["kind"] == "api"}
    assert names["mindspore.runtime.synchronize"] is False
    assert names["mindspore.ops.auto_generate.Chunk"] is False
    assert names["mindspore.ops.auto_generate.Gather"] is True


def test_entry_restricts_the_count_to_the_files_it_loads(tmp_path):
    (tmp_path / "a.py").write_text("from mindspore import ops\nops.planted_a\n")
    (tmp_path / "b.py").write_text("from mindspore import ops\nops.planted_b\n")
    result = api_audit.audit(tmp_path)
    assert result["total"] == 3
    only_a = api_audit.restrict(result, ["a.py"])
    assert {r["name"]: r["files"] for r in only_a["rows"]} == {
        "mindspore.ops": ["a.py"], "mindspore.ops.planted_a": ["a.py"]}
    assert (only_a["total"], only_a["provided"]) == (2, 1)


def test_the_readme_quotes_the_counts_the_audit_finds_now(counted):
    """``compat/paddle_mindspore/README.md`` holds the block ``python compat/api_audit.py --readme``
    writes: if a change to the layer (or the audit) changes a count, write it again."""
    block = api_audit_readme.block(counted)
    assert block in api_audit_readme.README.read_text(), (
        "the layer's README quotes stale API audit counts: run python compat/api_audit.py --readme")
    llama = list(counted.values())[1]
    assert 400 < llama["files"] < 544 and llama["total"] < list(counted.values())[0]["total"]
    names = {r["name"] for r in llama["rows"]}
    assert {"Primitive.shard", "Cell.set_comm_fusion", "Primitive.add_prim_attr"} <= names


def test_the_recorded_mindformers_presence_covers_every_name_the_audit_finds(counted):
    mindformers = list(counted.values())[0]
    presence = json.loads((RECORDED / "mindformers_api_presence.json").read_text())
    assert presence["mindspore"] == "2.10.0"
    assert set(presence["present"]) == {r["name"] for r in mindformers["rows"]}


def test_readme_rewrites_only_its_block(tmp_path, counted):
    readme = tmp_path / "README.md"
    readme.write_text(f"before\n{api_audit_readme.BEGIN}\nold counts\n{api_audit_readme.END}\nafter\n")
    api_audit_readme.update(readme, counted)
    assert readme.read_text() == f"before\n{api_audit_readme.block(counted)}\nafter\n"
