"""The grad transforms free activations as backward goes (NOTE [ A lean backward ] in
``paddle_mindspore/_backward.py``), with the gradients ``paddle.grad`` gave, bit for bit.

``_force_paddle_grad`` puts the transforms back onto ``paddle.grad`` (what they ran on before), so each
test compares the two side by side: peak host bytes of one step (Paddle's allocator, exact and
deterministic), losses, gradients and parameters after optimizer steps.
"""

from __future__ import annotations

import gc

import numpy as np
import paddle
import pytest
from _ms_helpers import held_bytes
from paddle.base import core

import paddle_mindspore as ms
from paddle_mindspore import _backward, nn

B, D, N = 1024, 128, 8  # batch, width, blocks: activations (5 B x D per block) outweigh gradients


class Block(nn.Cell):
    def __init__(self):
        super().__init__()
        self.up, self.down = nn.Dense(D, 4 * D), nn.Dense(4 * D, D)

    def construct(self, x):
        return x + self.down(ms.ops.tanh(self.up(x)))


class Chain(nn.Cell):
    def __init__(self, recompute: dict | None = None):
        super().__init__()
        self.blocks = nn.CellList([Block() for _ in range(N)])
        for block in self.blocks if recompute is not None else ():
            block.recompute(**recompute)

    def construct(self, x, y):
        for block in self.blocks:
            x = block(x)
        return ((x - y) ** 2).mean()


def _chain(recompute: dict | None = None) -> Chain:
    ms.set_seed(3)
    return Chain(recompute)


def _data():
    rng = np.random.default_rng(0)
    return (ms.Tensor(rng.standard_normal((B, D)).astype(np.float32)),
            ms.Tensor(rng.standard_normal((B, D)).astype(np.float32)))


@pytest.fixture
def paddle_grad_calls(monkeypatch):
    """How many times the transforms called ``paddle.grad``."""
    calls = []
    original = paddle.grad

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(paddle, "grad", counted)
    return calls


def _force_paddle_grad(patch) -> None:
    patch.setattr(_backward, "lean_gradients", lambda *args, **kwargs: None)


def _peak_of(run) -> tuple[int, object]:
    """Peak host bytes allocated while ``run()`` runs, above those held before; and its result."""
    gc.collect()
    before = held_bytes()
    core.host_memory_stat_reset_peak_value("Allocated", 0)
    result = run()
    return core.host_memory_stat_peak_value("Allocated", 0) - before, result


def _train_one_step(net):
    step = nn.TrainOneStepCell(net, nn.SGD(net.trainable_params(), 0.1), return_grad=True)
    step.set_train()
    x, y = _data()
    return lambda: step(x, y)


def _value_and_grad(net):
    fn = ms.value_and_grad(net, None, net.trainable_params())
    x, y = _data()
    return lambda: fn(x, y)


def _grad_operation(net):
    fn = ms.ops.GradOperation(get_by_list=True)(net, net.trainable_params())
    x, y = _data()
    return lambda: (None, fn(x, y))


TRANSFORMS = {"train_one_step": _train_one_step, "value_and_grad": _value_and_grad,
              "grad_operation": _grad_operation}


def _arrays(result) -> list:
    loss, grads = result
    if isinstance(grads, dict):  # TrainOneStepCell(return_grad=True): {name: gradient}
        grads = [grads[k] for k in sorted(grads)]
    return ([] if loss is None else [loss.numpy()]) + [g.numpy() for g in grads]


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
def test_a_training_step_peaks_lower_with_the_same_gradients(memory_stats, paddle_grad_calls,
                                                             transform):
    """Under ``paddle.grad`` the step holds every activation until backward ends; now they go as
    backward passes them: the peak falls by about the activations, gradients unchanged."""
    with pytest.MonkeyPatch.context() as patch:
        _force_paddle_grad(patch)
        old_peak, old = _peak_of(TRANSFORMS[transform](_chain()))
    assert len(paddle_grad_calls) == 1
    new_peak, new = _peak_of(TRANSFORMS[transform](_chain()))
    assert len(paddle_grad_calls) == 1  # the lean backward ran, not paddle.grad
    # paddle.grad's peak: every activation plus every gradient; now the gradients grow as the
    # activations go, so the peak falls by about the smaller of the two (here the gradients)
    gradients = 4 * sum(int(np.prod(p.shape)) for p in _chain().trainable_params())
    assert new_peak < old_peak - gradients // 2, (new_peak, old_peak, gradients)
    for a, b in zip(_arrays(old), _arrays(new), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("reentrant", [True, False], ids=["reentrant", "non_reentrant"])
def test_recompute_lowers_a_training_step_peak_as_far_as_backward_alone(memory_stats, reentrant):
    """With every block recomputed the step keeps one block's activations at a time: its peak is
    below half of the plain step's, and below the recomputed step's under ``paddle.grad`` (far
    below in non-reentrant regions, whose recomputed activations ``paddle.grad`` kept to the end;
    by the tensors freed earlier in reentrant ones)."""
    plain_peak, plain = _peak_of(_value_and_grad(_chain()))
    options = {"use_reentrant": reentrant}
    peak, recomputed = _peak_of(_value_and_grad(_chain(options)))
    with pytest.MonkeyPatch.context() as patch:
        _force_paddle_grad(patch)
        old_peak, old = _peak_of(_value_and_grad(_chain(options)))
    assert peak < plain_peak / 2, (peak, plain_peak)
    assert peak < old_peak, (peak, old_peak)
    for a, b, c in zip(_arrays(plain), _arrays(recomputed), _arrays(old), strict=True):
        np.testing.assert_array_equal(b, a)
        np.testing.assert_array_equal(b, c)


def test_grads_set_before_are_kept_and_others_are_not_touched(paddle_grad_calls):
    """A requested parameter's ``.grad`` from an earlier Paddle backward keeps its values (not
    accumulated into), with the lean backward run; a parameter the transform does not
    differentiate gets no ``.grad`` (the transform uses ``paddle.grad`` for that one)."""
    net = _chain()
    x, y = _data()
    net(x, y).backward()
    params = net.trainable_params()
    before = [p.grad.numpy().copy() for p in params]
    fn = ms.value_and_grad(net, None, params)
    _, grads = fn(x, y)
    assert not paddle_grad_calls
    for p, b, g in zip(params, before, grads, strict=True):
        np.testing.assert_array_equal(p.grad.numpy(), b)
        np.testing.assert_array_equal(g.numpy(), b)  # the same step's gradient, computed again

    fresh = _chain()
    first = fresh.trainable_params()[:1]
    _, grads = ms.value_and_grad(fresh, None, first)(x, y)
    assert len(paddle_grad_calls) == 1
    assert all(p.grad is None for p in fresh.trainable_params())
    np.testing.assert_array_equal(grads[0].numpy(), before[0])


@pytest.mark.parametrize("asked", ["some_weights", "input_only"])
def test_a_step_on_paddle_grad_frees_its_graph(memory_stats, paddle_grad_calls, asked):
    """A transform sent to ``paddle.grad`` because the Cell has parameters it is not asked for
    decides so without reading the graph (NOTE [ Reading the graph ]): each step's graph is
    freed, so repeated steps hold no more memory than the first; a step asked for all the
    parameters takes the lean backward."""
    net = _chain()
    x, y = _data()
    fn = (ms.value_and_grad(net, None, net.trainable_params()[:3]) if asked == "some_weights"
          else ms.grad(net, 0))
    held = []
    for _ in range(3):
        fn(x, y)
        gc.collect()
        held.append(held_bytes())
    assert held[2] == held[1] == held[0], held
    assert len(paddle_grad_calls) == 3
    ms.value_and_grad(net, None, net.trainable_params())(x, y)
    assert len(paddle_grad_calls) == 3


@pytest.mark.parametrize("mode", [None, {"use_reentrant": True}, {"use_reentrant": False}],
                         ids=["plain", "reentrant", "non_reentrant"])
def test_mindcv_training_equals_the_paddle_grad_path_bit_for_bit(zoo, mode, paddle_grad_calls):
    """mindcv's ResNet-18 (BatchNorm, residual blocks), two steps of mindcv's training loop
    (``zoo_case.train``: ``value_and_grad`` over the optimizer's grouped parameters, momentum
    with weight decay): losses, logits and every parameter after the steps equal the
    ``paddle.grad`` path's."""
    import zoo_case

    def run():
        net = zoo_case.build("resnet18")
        for block in zoo_case.repeated_blocks(net) if mode is not None else ():
            block.recompute(**mode)
        losses, logits = zoo_case.train(net, 32)
        return losses, logits, [p.numpy() for p in net.trainable_params()]

    with pytest.MonkeyPatch.context() as patch:
        _force_paddle_grad(patch)
        old = run()
    assert len(paddle_grad_calls) == 2
    new = run()
    assert len(paddle_grad_calls) == 2
    assert new[0] == old[0]
    np.testing.assert_array_equal(new[1], old[1])
    for a, b in zip(old[2], new[2], strict=True):
        np.testing.assert_array_equal(b, a)
