"""BatchNorm as MindSpore 2.10 computes it on the CPU (NOTE [ MindSpore's BatchNorm arithmetic ]
in nn/_norm.py), against compat/tests/recorded/batchnorm.json (compat/record/record_batchnorm.py).

The cases: ``nn.BatchNorm2d`` / ``nn.BatchNorm1d`` in inference on MindSpore's moving
statistics; one case has channels whose mean is 800 times their spread, where Paddle's kernel
(``x * a + (beta - mean * a)``) cancels.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from _ms_helpers import ROOT

import paddle_mindspore as ms

RECORD = json.loads((ROOT / "compat" / "tests" / "recorded" / "batchnorm.json").read_text())
ZOO = ROOT / "compat" / "tests" / "recorded" / "zoo"
CASES = RECORD["cases"]
# MindSpore sums a channel's values in its own vectorised order, which cannot be reproduced;
# the statistics differ by an ulp here and there, and the outputs, moving statistics and
# gradients by a few ulps of the largest (measured: at most 3.1e-7 of it, bn1d's output; the
# gradients 3.0e-7, bn2d's dgamma).
ULPS = 2.0**-21


def _cell(case):
    shape = case["shape"]
    cell = (ms.nn.BatchNorm2d if len(shape) == 4 else ms.nn.BatchNorm1d)(shape[1], momentum=case["momentum"])
    for name in ("gamma", "beta", "moving_mean", "moving_variance"):
        getattr(cell, name).set_data(ms.Tensor(np.array(case[name], np.float32)))
    return cell


def _array(case, key):
    return ms.Tensor(np.array(case[key], np.float32).reshape(case["shape"]))


def _close(mine, theirs, share, what):
    mine = np.asarray(mine if isinstance(mine, np.ndarray) else mine.numpy(), np.float32).ravel()
    theirs = np.asarray(theirs, np.float32)
    bound = share * float(np.abs(theirs).max())
    diff = float(np.abs(mine - theirs).max())
    assert diff <= bound, f"{what}: differs from MindSpore by {diff:.3g}, the bound is {bound:.3g}"


@pytest.mark.parametrize("name", list(CASES))
def test_inference_is_bit_identical_to_mindspore(name):
    """With MindSpore's moving statistics, ``(x - mean) * (gamma / sqrt(var + eps)) + beta``."""
    case = CASES[name]
    cell = _cell(case)
    cell.moving_mean.set_data(ms.Tensor(np.array(case["moved_mean"], np.float32)))
    cell.moving_variance.set_data(ms.Tensor(np.array(case["moved_variance"], np.float32)))
    cell.set_train(False)
    out = cell(_array(case, "x"))
    np.testing.assert_array_equal(out.numpy().ravel(), np.array(case["eval_out"], np.float32))
