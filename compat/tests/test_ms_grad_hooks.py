"""``Tensor.register_hook`` and the reuse of a grad-flagged Cell's forward, against real
MindSpore 2.10.

Cases: compat/record/ms_cases_grad_hooks.py; record: recorded/k_grad_hook_cases.json. The
hook cases log every call of every hook with its gradient, so a hook that fires twice, too
early or not at all fails the comparison, inside ``Cell.recompute()`` and ``ms.recompute``
regions too (each fires once per backward). The reuse cases count the network's forwards and
read BatchNorm's moving statistics, which move once per forward. Tolerance 1e-6: one float32
forward and backward, summed in another order.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
from _ms_cases import compare, recorded, run_case

import paddle_mindspore as ms
from paddle_mindspore import _forward_reuse, nn

CASES = recorded("k_grad_hook_cases.json")["cases"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_matches_mindspore(name):
    compare(CASES[name]["result"], run_case(CASES[name]["source"]), name)


def test_hooks_fire_on_the_copies_the_transform_differentiates():
    """The input case through the mechanism: the hook sees the copy's gradient, once per call,
    and a removed hook leaves nothing behind on the tensor."""
    x = ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    seen = []
    handle = x.register_hook(lambda g: seen.append(g) or g * 2)
    grad = ms.grad(lambda v: (v * v).sum())(x)
    assert len(seen) == 1 and seen[0] is not x
    np.testing.assert_array_equal(grad.numpy(), 4 * x.numpy())
    handle.remove()
    assert x.__dict__["_ms_grad_hooks"] == {}
    np.testing.assert_array_equal(ms.grad(lambda v: (v * v).sum())(x).numpy(), 2 * x.numpy())
    assert len(seen) == 1


def test_a_reused_forward_is_taken_once_and_records_are_bounded():
    calls = []

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(3, 2)

        def construct(self, v):
            calls.append(1)
            return self.fc(v).sum()

    net = Net().set_grad()
    xs = [ms.Tensor(np.full((2, 3), i, np.float32)) for i in range(_forward_reuse._KEPT + 1)]
    for v in xs:
        net(v)
    assert len(_forward_reuse._STATE.runs[id(net)]) == _forward_reuse._KEPT
    weights = net.trainable_params()
    ms.grad(net, None, weights)(xs[0])  # the oldest record was dropped: a new forward
    ms.grad(net, None, weights)(xs[-1])  # reused
    assert len(calls) == len(xs) + 1
    net(xs[0])
    net.set_grad(False)
    assert _forward_reuse._STATE.runs[id(net)] == []
    net.set_grad()
    net(xs[0])
    key = id(net)
    del net  # the records go with the Cell
    gc.collect()
    assert key not in _forward_reuse._STATE.runs


def test_a_stale_record_reads_the_weights_as_they_are_now():
    """An optimizer-like in-place write between the recorded forward and the transform: no
    second forward, the recorded value, and the backward reads the new weight (the input
    gradient scales with it) instead of Paddle's PermissionDenied; the hook frame is gone."""
    from paddle_recompute._core import hooks as core_hooks

    calls = []

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(3, 1, has_bias=False)

        def construct(self, v):
            calls.append(1)
            return self.fc(v).sum()

    net = Net().set_grad()
    x = ms.Tensor(np.ones((2, 3), np.float32))
    loss = net(x)
    assert core_hooks.active_frames() == ()
    weight = net.fc.weight.numpy().copy()
    ms.ops.assign(net.fc.weight, ms.Tensor(weight * 3))
    value, grad = ms.value_and_grad(net, 0)(x)
    assert len(calls) == 1
    np.testing.assert_array_equal(value.numpy(), loss.numpy())
    np.testing.assert_array_equal(grad.numpy(), np.broadcast_to(weight * 3, (2, 3)))


def test_a_recorded_forward_that_raises_leaves_no_frame():
    from paddle_recompute._core import hooks as core_hooks

    class Bad(nn.Cell):
        def construct(self, v):
            raise ValueError("inside")

    net = Bad().set_grad()
    with pytest.raises(ValueError, match="inside"):
        net(ms.Tensor(np.ones((2, 3), np.float32)))
    assert core_hooks.active_frames() == ()


def test_remove_hook_finds_the_holder_by_id_and_lets_it_go():
    """``remove_hook`` reaches the tensor through the process-wide registry, takes the Paddle
    hook of an intermediate out too, and the registry holds no tensor alive."""
    from paddle_mindspore import _grad_hooks as ms_hooks

    x = ms.Tensor(np.ones((2, 3), np.float32))
    x.stop_gradient = False
    y = x * 2
    handle = y.register_hook(lambda g: g * 7)
    assert ms_hooks._HOLDERS[handle.id] is y and handle.id in y.__dict__["_ms_paddle_hooks"]
    ms.Tensor.remove_hook(handle.id)
    assert y.hooks() == [] and y.__dict__["_ms_paddle_hooks"] == {}
    (grad,) = __import__("paddle").grad((y * y).sum(), [x])
    np.testing.assert_array_equal(grad.numpy(), np.full((2, 3), 8, np.float32))  # no * 7
    kept = y.register_hook(lambda g: g)
    del y
    gc.collect()
    assert kept.id not in ms_hooks._HOLDERS
