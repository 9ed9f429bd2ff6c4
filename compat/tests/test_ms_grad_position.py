"""``grad`` / ``value_and_grad`` return MindSpore 2.10's nesting for every ``grad_position``.

Record: recorded/grad_position.json (``compat/record/record_grad_position.py``): one position,
given as ``0`` or as ``(0,)``, is one Tensor; with weights, ``has_aux`` (aux comes back as a
tuple) and ``value_and_grad`` alike; and the ``grad_position`` values MindSpore refuses, with
its exception, its text and whether making or calling the transform raised.  The values are
products of small exact floats: compared exactly.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from _ms_cases import recorded
from _ms_helpers import COMPAT

import paddle_mindspore as ms

_spec = importlib.util.spec_from_file_location("record_grad_position",
                                               COMPAT / "record" / "record_grad_position.py")
recorder = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(recorder)

RECORD = recorded("grad_position.json")["cases"]


@pytest.fixture(scope="module")
def layer_results() -> dict:
    namespace = {"__name__": "ms_case", "ms": ms, "np": np, "Tensor": ms.Tensor,
                 "Parameter": ms.Parameter}
    return recorder.run_cases(namespace)


def test_every_case_was_recorded():
    assert sorted(RECORD) == sorted(name for name, *_ in recorder.cases())


@pytest.mark.parametrize("name", sorted(RECORD))
def test_result_matches_mindspore(name, layer_results):
    expected, got = RECORD[name], layer_results[name]
    if "error" in expected:
        assert got == expected
        return
    assert got.get("nesting") == expected["nesting"], got
    assert len(got["values"]) == len(expected["values"])
    for g, e in zip(got["values"], expected["values"], strict=True):
        np.testing.assert_array_equal(np.asarray(g, np.float32), np.asarray(e, np.float32))


def test_a_tuple_of_one_position_is_one_tensor():
    """The case that differed: ``grad_position=(0,)`` gave a tuple of one Tensor."""
    assert RECORD["grad/one/none/aux=False"]["nesting"] == "Tensor"
    x = ms.Tensor(np.array([1.0, 2.0], np.float32))
    g = ms.grad(lambda a: (a * a).sum(), grad_position=(0,))(x)
    assert isinstance(g, ms.Tensor)
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0])
