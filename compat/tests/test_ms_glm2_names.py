"""The MindSpore names mindformers' GLM2 uses beyond Llama's, case by case against real
MindSpore 2.10 (``compat/record/ms_cases_glm2.py``, recorded/l_glm2_cases.json):
``SplitWithSize``, ``Stack``, ``Tril``, ``Equal`` and ``Less`` (values and input gradients),
``Mul`` and ``Add`` on a uint8 attention mask (MindSpore wraps ``mask * -10000`` to 240 and
promotes the sum to float32), ``Tensor.type`` and ``Tensor.to``; and the inference kernels
GLM2's attention cell builds for training too: they construct, and raise when called.
"""

from __future__ import annotations

import numpy as np
import pytest
from _ms_cases import compare, recorded, run_case

import paddle_mindspore as ms

CASES = recorded("l_glm2_cases.json")["cases"]
# MindSpore 2.10 computes a wrong input gradient for this case (see ms_cases_glm2.VIEW_GRADIENT)
VIEW_GRADIENT = "view_gradient/split_with_size_concat"


@pytest.mark.parametrize("name", sorted(set(CASES) - {VIEW_GRADIENT}))
def test_case_matches_mindspore(name, alias):
    compare(CASES[name]["result"], run_case(CASES[name]["source"]), name)


def test_split_then_concat_gradient_is_right_where_mindspores_is_not(alias):
    """The forward values are MindSpore's; the input gradient is the right one (each input
    element gets the output gradient at the place it moved to), which MindSpore's is not."""
    expected = CASES[VIEW_GRADIENT]["result"]["items"]
    out, grad = run_case(CASES[VIEW_GRADIENT]["source"])
    compare(expected[0], out, VIEW_GRADIENT)
    dout = np.linspace(-1, 1, 12).reshape(3, 4).astype(np.float32)
    right = np.concatenate([dout[:, 1:], dout[:, :1]], axis=1)  # out = [x[:, 3:], x[:, :3]]
    np.testing.assert_array_equal(grad.numpy(), right)
    assert not np.array_equal(np.array(expected[1]["values"], np.float32), right)


@pytest.mark.parametrize("call", [
    lambda: ms.ops.ApplyRotaryPosEmb(3)(None, None, None, None, None),
    lambda: ms.ops.auto_generate.PagedAttention(4, 0.5, 2)(None, None),
    lambda: ms.ops.auto_generate.PagedAttentionMask(4, 0.5, 2)(None, None, None, None, None),
    lambda: ms.ops.auto_generate.ReshapeAndCache()(None, None, None, None, None),
])
def test_inference_kernels_raise_when_called(call):
    with pytest.raises(NotImplementedError, match="inference kernel over a paged key/value cache"):
        call()


def test_split_with_size_refuses_sizes_that_do_not_add_up():
    x = ms.Tensor([[1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match="SplitWithSize"):
        ms.ops.auto_generate.SplitWithSize()(x, (1, 1), 1)
