"""The reference data of real MindSpore 2.10 in data/: intact, and every part of it used.

- data/ is a byte-for-byte copy of the shared reference (checked where that is at hand);
- every data file is read by some test;
- every observation line of d_semantics_pynative.txt is checked by a test (here or in the
  other test files), or is listed in ``NOT_REPRODUCED`` with the reason, which compat/README.md
  states as a semantic difference.
"""

from __future__ import annotations

import ast
import filecmp
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from _ms_helpers import DATA, ROOT, semantics

import paddle_mindspore as ms
from paddle_mindspore import nn, ops

SHARED = ROOT.parent / "shared" / "reference" / "mindspore"
TESTS = Path(__file__).parent

# Graph-mode bookkeeping MindSpore records on cells and primitives; a single-device eager
# layer has no graph to attach it to (compat/README.md, "Every semantic difference", 3).
NOT_REPRODUCED = {
    "Cell.recompute.flags": "graph-mode attributes (_scope 'recompute_', _recompute_cell)",
    "Cell.recompute(output_recompute=True).flags": "graph-mode attributes",
    "Cell.recompute(mp_comm_recompute=False, recompute_slice_activation=True) attrs":
        "parallel-communication primitive attributes; the options are validated and recorded",
}


def _test_sources() -> str:
    return "\n".join(p.read_text() for p in sorted(TESTS.glob("*.py")))


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared reference directory is not at hand")
def test_data_is_a_byte_for_byte_copy_of_the_shared_reference():
    shared = sorted(p.name for p in SHARED.iterdir())
    assert sorted(p.name for p in DATA.iterdir()) == shared
    match, mismatch, errors = filecmp.cmpfiles(SHARED, DATA, shared, shallow=False)
    assert (mismatch, errors) == ([], []) and len(match) == len(shared)


def test_every_data_file_is_read_by_a_test():
    sources = _test_sources()
    for path in DATA.iterdir():
        if path.name != "README.md":  # the provenance notes; its headline values are checked
            assert f'"{path.name}"' in sources, f"{path.name} is not used by any test"
    assert "3.0577900409698486" in sources and "4.1805587" in sources  # README.md's headline values


def test_every_observation_is_checked_or_accounted_for():
    sources = _test_sources()
    dynamic = re.findall(r'f"([^"{]+)\{', sources)  # labels built with f-strings: their prefixes
    for label in semantics():
        used = f'"{label}"' in sources or any(label.startswith(prefix) for prefix in dynamic)
        assert used or label in NOT_REPRODUCED, f"[{label}] is neither tested nor accounted for"


def test_recompute_is_defined_in_common_recompute():
    assert semantics()["ms.recompute is mindspore.common.recompute.recompute"] == \
        "OK: mindspore.common.recompute.recompute"
    from paddle_mindspore.common.recompute import recompute

    assert recompute is ms.recompute is ms.common.recompute
    assert "paddle_mindspore.common.recompute" in sys.modules


def test_primitive_recompute_mode_keyword_returns_the_primitive():
    relu = ops.ReLU()
    observed = relu.recompute(mode=True) is relu
    assert f"OK: {observed}" == semantics()["Primitive.recompute(mode=True) kw"]


def test_primitive_recompute_returns_self_and_sets_the_recompute_attribute():
    theirs = ast.literal_eval(semantics()["Primitive.recompute()"].removeprefix("OK: "))
    relu = ops.ReLU()
    before = dict(relu.attrs)
    returns_self = relu.recompute() is relu
    after = {k: str(v) for k, v in relu.attrs.items()}
    ours = {"returns_self": returns_self, "attrs_before": before, "attrs_after": after,
            "recompute(False).attrs.recompute": str(relu.recompute(False).attrs["recompute"])}
    assert ours == theirs


def test_recompute_twice_and_child_after_parent_raise_nothing():
    observed = semantics()["Cell.recompute called twice / child after parent"]
    assert ast.literal_eval(observed.removeprefix("OK: ")) == {"second_call": "no exception",
                                                               "inner_recompute_cell_set": True}
    inner = nn.SequentialCell([nn.Dense(3, 3), nn.ReLU()])
    outer = nn.SequentialCell([inner, nn.Dense(3, 3)])
    outer.recompute()
    outer.recompute()
    inner.recompute()
    assert inner._ms_recompute is not None  # the child's own setting is kept, as in MindSpore
    x = ms.Tensor(np.ones((2, 3), np.float32))
    assert ms.grad(outer)(x).shape == [2, 3]


def _fingerprints() -> dict[str, str]:
    """Our version of the reference's 32-element dropout mask fingerprints."""
    x = ms.Tensor(np.ones((32,), np.float32))

    def bits(prim_or_fn):
        mask = prim_or_fn(x)[1] if isinstance(prim_or_fn, ops.Dropout) else prim_or_fn(x) != 0
        return "".join("1" if v else "0" for v in mask.numpy().astype(bool))

    # The reference's first default-seeded draw did not follow set_seed(1): it differs from the
    # draw of a new instance right after set_seed(1). Start from another seed for the same effect.
    ms.set_seed(0)
    prints = {}
    default = ops.Dropout(0.5)
    prints["default_seeds: call1"], prints["default_seeds: call2 same inst"] = bits(default), bits(default)
    ms.set_seed(1)
    prints["default_seeds: new inst after set_seed(1)"] = bits(ops.Dropout(0.5))
    seeded = ops.Dropout(0.5, 1, 2)
    prints["Seed0=1,Seed1=2: call1"], prints["Seed0=1,Seed1=2: call2 same inst"] = bits(seeded), bits(seeded)
    prints["Seed0=1,Seed1=2: new inst"] = bits(ops.Dropout(0.5, 1, 2))
    for key in ("ops.dropout(p=0.5) after set_seed(1)", "ops.dropout(p=0.5) after set_seed(1) again"):
        ms.set_seed(1)
        prints[key] = bits(lambda t: ops.dropout(t, p=0.5))
    return prints


def test_dropout_repeats_and_advances_where_mindspores_does():
    """Paddle's generator is not MindSpore's, so the bits differ; which draws repeat must not."""
    theirs = ast.literal_eval(semantics()["Dropout reproducibility (bit fingerprints of 32 elems)"]
                              .removeprefix("OK: "))
    ours = _fingerprints()
    assert sorted(ours) == sorted(theirs)
    for a in theirs:
        for b in theirs:
            assert (ours[a] == ours[b]) == (theirs[a] == theirs[b]), (a, b)


# --- observed behaviour (non-error lines of d_semantics_pynative.txt) -------------------------


class Inner(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 3)

    def construct(self, x):
        return self.fc(x)

class AddOne(nn.Cell):
    def construct(self, n):
        return n + 1


def test_recompute_forward_values_like_mindspore():
    observed = semantics()
    x = ms.Tensor(np.ones((2, 3), np.float32))
    assert "OK: " + str(tuple(ms.recompute(Inner(), x).shape)) == observed["recompute(Cell) forward value"]
    assert "OK: " + str(ms.recompute(AddOne(), 2)) == observed["recompute(Cell) with non-tensor only input"]
    grad = ms.grad(lambda t: ms.recompute(lambda u: u * 2, t, use_reentrant=False).sum())(x)
    label = "grad through recompute(lambda, use_reentrant=False)"
    assert "OK: " + str(tuple(grad.shape)) == observed[label]


def test_cell_recompute_changes_neither_forward_nor_grad():
    ms.set_seed(0)
    cell = Inner()
    x = ms.Tensor(np.random.RandomState(0).rand(2, 3).astype(np.float32))
    before = (cell(x).numpy(), ms.grad(cell, None, cell.trainable_params())(x)[0].numpy())
    cell.recompute()
    after = (cell(x).numpy(), ms.grad(cell, None, cell.trainable_params())(x)[0].numpy())
    observed = {"forward_equal": bool(np.array_equal(before[0], after[0])),
                "grad_equal": bool(np.array_equal(before[1], after[1]))}
    assert "OK: " + str(observed) == semantics()["Cell.recompute changes forward?"]


def test_primitive_recompute_docstring_example():
    """The example of MindSpore's Primitive.recompute docstring: sqrt(relu(x)), relu marked."""
    class NetRecompute(nn.Cell):
        def __init__(self):
            super().__init__()
            self.relu = ops.ReLU().recompute()
            self.sqrt = ops.Sqrt()

        def construct(self, x):
            out = self.relu(x)
            return self.sqrt(out)

    class GradNet(nn.Cell):
        def __init__(self, network):
            super().__init__()
            self.network = network
            self.grad = ops.GradOperation()

        def construct(self, x):
            return self.grad(self.network)(x)

    x = ms.Tensor(np.array([-1, 1]).astype(np.float32))
    grad = GradNet(NetRecompute())(x)
    expected = semantics()["Primitive.recompute docstring example (expect [0. 0.5])"]
    assert "OK: " + str(grad.numpy().tolist()) == expected
