"""A policy must answer True, False or ``policies.OFFLOAD``; anything else is a TypeError that
names the policy and what it returned (a truthy string was once taken as "keep")."""

from __future__ import annotations

import numpy as np
import paddle
import pytest
from paddle import nn

from paddle_recompute import policies, recompute


def _say(answer):
    def policy(info):
        return answer
    policy.__qualname__ = "say_something"
    return policy


def _leaf(*shape):
    x = paddle.randn(list(shape))
    x.stop_gradient = False
    return x


BAD = {
    "string": "keep",
    "empty_string": "",
    "none": None,
    "tensor": paddle.to_tensor(True),
    "int": 1,
    "numpy_bool": np.bool_(True),
}


@pytest.mark.parametrize("kind", list(BAD))
@pytest.mark.parametrize("wrap", ["alone", "save_any_of", "offload"])
def test_bad_answer_raises_type_error(kind, wrap):
    policy = _say(BAD[kind])
    if wrap == "save_any_of":
        policy = policies.save_any_of(lambda info: False, policy)
    elif wrap == "offload":
        policy = policies.offload(policy)
    lin = nn.Linear(4, 4)
    x = _leaf(2, 4)
    pattern = r"recompute\(policy=\.\.\.\): the policy .*say_something.* returned "
    with pytest.raises(TypeError, match=pattern) as err:
        recompute(lambda t: paddle.tanh(lin(t)), x, use_reentrant=False, policy=policy)
    assert f"a {type(BAD[kind]).__name__})" in str(err.value)
    assert "policies.OFFLOAD" in str(err.value)
    # the region left no state behind: a plain step still trains
    paddle.tanh(lin(x)).sum().backward()
    assert lin.weight.grad is not None
