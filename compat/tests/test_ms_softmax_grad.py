"""The softmax gradient against MindSpore 2.10, and the state in which MindSpore's is wrong.

Record: recorded/softmax_grad_after_size_one.json (``compat/record/record_softmax_grad.py``).
MindSpore computes the softmax gradient ``p * (dp - sum(dp * p))`` until a softmax backward over
a last axis of size 1 has run in the process; from then on every softmax backward of that rank
gives ``dp * p * (1 - p)`` (recorded, each sequence in its own process). That is why mindcv's
mobilevit_xx_small and mobilevit_x_small stepped differently in MindSpore at 64 px (their last
stage's attention is over one patch, and its backward comes first) until the zoo's recorder
warmed the softmax backward of every rank first (``warm_softmax_backward``, the sequence
``warmed_then_size_one`` here). The layer keeps no such
state: it gives the softmax gradient in every sequence, MindSpore's own where MindSpore's is right.
Tolerance 1e-6: one float32 softmax and its backward, in another kernel.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from _ms_cases import recorded
from _ms_helpers import COMPAT

import paddle_mindspore as ms

_spec = importlib.util.spec_from_file_location("record_softmax_grad",
                                               COMPAT / "record" / "record_softmax_grad.py")
recorder = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(recorder)

RECORD = recorded("softmax_grad_after_size_one.json")
WRONG = {"after_size_one"}  # the sequences where MindSpore's last gradient is dp * p * (1 - p)


def _softmax_grad(shape: tuple) -> dict:
    """The recorder's ``softmax_grad`` (MindSpore code) run under the layer."""
    namespace = {"__name__": "ms_case", "ms": ms, "ops": ms.ops, "Tensor": ms.Tensor, "np": np}
    exec(compile(recorder.SOFTMAX_GRAD, "<case>", "exec"), namespace)
    return namespace["softmax_grad"](shape)  # numpy arrays (asnumpy)


@pytest.mark.parametrize("name", sorted(RECORD["sequences"]))
def test_softmax_gradient_against_mindspore(name):
    seq = RECORD["sequences"][name]
    for shape in seq["shapes"]:
        ours = _softmax_grad(tuple(shape))
    p, dp, dx = (np.asarray(seq[k], np.float32) for k in ("p", "dp", "dx"))
    np.testing.assert_allclose(ours["p"], p, atol=1e-6)
    np.testing.assert_allclose(ours["dp"], dp, atol=1e-6)
    exact = ours["p"] * (ours["dp"] - (ours["dp"] * ours["p"]).sum(-1, keepdims=True))
    np.testing.assert_allclose(ours["dx"], exact, atol=1e-6)
    if name in WRONG:  # MindSpore's is the defect, to its float32 rounding; ours differs
        np.testing.assert_allclose(dx, dp * p * (1 - p), atol=1e-7)
        assert np.abs(ours["dx"] - dx).max() > 1e-2
    else:
        np.testing.assert_allclose(ours["dx"], dx, atol=1e-6)
