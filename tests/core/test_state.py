"""Random, autocast and running-statistics state: replayed in recomputation, untouched after it."""

import contextlib
import functools
import random

import numpy as np
import paddle
import pytest
from _rc_helpers import amp_state, seed_all, tracer_autocast
from paddle import nn
from paddle.base import core
from paddle.distributed.fleet.meta_parallel import get_rng_state_tracker

from paddle_recompute import recompute, register_rng_state, register_stateful_layer
from paddle_recompute.testing import (
    assert_loss_parity,
    assert_tensors_equal,
    recompute_sublayers,
)

# --------------------------------------------------------------------------- helpers


def leaf(*shape):
    t = paddle.randn(list(shape))
    t.stop_gradient = False
    return t


def next_draws() -> dict:
    """One draw from each global generator: equal draws mean equal states."""
    return {"paddle": paddle.rand([4]).numpy(), "numpy": np.random.rand(4), "random": random.random()}


class NoisyBlock(nn.Layer):
    """Draws from Paddle (dropout), numpy and Python's random, and records what it drew."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.drop = nn.Dropout(0.5)
        self.drawn = []

    def forward(self, x):
        h = self.drop(self.fc(x))
        noise = np.random.rand(6).astype("float32")
        gain = random.random()
        self.drawn.append((self.drop.training, noise, gain))
        return paddle.tanh(h * paddle.to_tensor(noise) * gain)


def run_noisy(mode, **options):
    """Seeded forward and backward; returns gradients, what each call drew, and the next draws."""
    seed_all()
    block = NoisyBlock()
    x = leaf(3, 6)
    out = block(x) if mode is None else recompute(block, x, use_reentrant=mode, **options)
    out.sum().backward()
    grads = [x.grad, block.fc.weight.grad, block.fc.bias.grad]
    return grads, block.drawn, next_draws()


# --------------------------------------------------------------------------- global RNGs


def test_recomputation_draws_what_the_forward_drew(use_reentrant):
    grads_plain, _, _ = run_noisy(None)
    grads, drawn, _ = run_noisy(use_reentrant)
    assert len(drawn) == 2
    assert_tensors_equal(list(drawn[1][1:]), list(drawn[0][1:]))
    assert_tensors_equal(grads, grads_plain)  # so the dropout masks matched too


def test_generators_stand_where_plain_training_leaves_them(use_reentrant):
    _, _, after_plain = run_noisy(None)
    _, _, after = run_noisy(use_reentrant)
    assert_tensors_equal(after, after_plain)


def test_generators_untouched_by_a_region_that_draws_nothing(use_reentrant):
    seed_all()
    layer = nn.Linear(4, 4)
    x = leaf(2, 4)
    layer(x).sum().backward()
    expected = next_draws()
    seed_all()
    layer = nn.Linear(4, 4)
    x = leaf(2, 4)
    recompute(layer, x, use_reentrant=use_reentrant).sum().backward()
    assert_tensors_equal(next_draws(), expected)


def test_preserve_rng_state_false_draws_a_new_mask(use_reentrant):
    """Without replay the recomputation draws fresh numbers: the gradients no longer match,
    and the generators end up further along."""
    grads_plain, _, after_plain = run_noisy(None)
    grads, drawn, after = run_noisy(use_reentrant, preserve_rng_state=False)
    assert not np.array_equal(drawn[0][1], drawn[1][1])
    with pytest.raises(AssertionError, match="Mismatched elements"):
        assert_tensors_equal(grads, grads_plain)
    with pytest.raises(AssertionError):
        assert_tensors_equal(after, after_plain)


# --------------------------------------------------------------------------- fleet tracker


@pytest.fixture
def tracker():
    """Paddle's process-wide model-parallel tracker with one fresh state; restored afterwards."""
    tracker = get_rng_state_tracker()
    saved = (dict(tracker.states_), set(tracker.seeds_))
    tracker.reset()
    yield tracker
    tracker.states_, tracker.seeds_ = saved


class TrackedBlock(nn.Layer):
    """Dropout drawn from the tracker's 'model_parallel_rng' state, as tensor-parallel code does."""

    def __init__(self, tracker):
        super().__init__()
        self.tracker = tracker
        self.fc = nn.Linear(6, 6)
        self.fc2 = nn.Linear(6, 6)

    def forward(self, x):
        with self.tracker.rng_state("model_parallel_rng"):
            h = nn.functional.dropout(self.fc(x), p=0.5)
        return paddle.tanh(self.fc2(nn.functional.dropout(h, p=0.3)))  # and the global generator


def run_tracked(tracker, mode):
    seed_all()
    tracker.reset()
    tracker.add("model_parallel_rng", 1234)
    block = TrackedBlock(tracker)
    x = leaf(4, 6)
    out = block(x) if mode is None else recompute(block, x, use_reentrant=mode)
    out.sum().backward()
    grads = [x.grad] + [p.grad for p in block.parameters()]
    with tracker.rng_state("model_parallel_rng"):
        tracked_next = paddle.rand([4])
    return grads, {"tracker": tracked_next, **next_draws()}


def test_fleet_tracker_state_is_replayed_and_restored(tracker, use_reentrant):
    grads_plain, after_plain = run_tracked(tracker, None)
    grads, after = run_tracked(tracker, use_reentrant)
    assert_tensors_equal(grads, grads_plain)
    assert_tensors_equal(after, after_plain)


# --------------------------------------------------------------------------- register_rng_state


def run_custom_rng(mode, register: bool):
    seed_all()
    rng = random.Random(7)
    drawn = []

    def f(x):
        value = rng.random()
        drawn.append(value)
        return paddle.tanh(x * value)

    x = leaf(2, 3)
    provider = register_rng_state("test_custom", rng.getstate, rng.setstate) if register else None
    with provider or contextlib.nullcontext():
        out = f(x) if mode is None else recompute(f, x, use_reentrant=mode)
        out.sum().backward()
    return drawn, x.grad, rng.random()


def test_registered_rng_state_is_replayed(use_reentrant):
    drawn_plain, grad_plain, next_plain = run_custom_rng(None, register=True)
    drawn, grad, next_value = run_custom_rng(use_reentrant, register=True)
    assert drawn == [drawn_plain[0]] * 2
    assert next_value == next_plain
    assert_tensors_equal(grad, grad_plain)


def test_unregistered_custom_rng_is_not_replayed(use_reentrant):
    """The control: without the provider the recomputation draws the next value."""
    drawn, _, _ = run_custom_rng(use_reentrant, register=False)
    assert drawn[0] != drawn[1]


def test_provider_removed_after_its_context():
    handle = register_rng_state("test_tmp", lambda: 0, lambda s: None)
    handle.remove()
    register_rng_state("test_tmp", lambda: 0, lambda s: None).remove()  # the name is free again


# --------------------------------------------------------------------------- AMP


class AmpProbe(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.seen = []

    def forward(self, x):
        self.seen.append(amp_state())
        return paddle.tanh(self.fc(x))


@pytest.mark.parametrize("level", [core.AmpLevel.O1, core.AmpLevel.O2], ids=["O1", "O2"])
def test_recomputation_sees_the_forward_autocast_state(level, use_reentrant):
    probe = AmpProbe()
    outside = amp_state()
    with tracer_autocast(level):
        inside = amp_state()
        out = recompute(probe, leaf(2, 4), use_reentrant=use_reentrant)
    out.sum().backward()  # backward outside the autocast context, as usual
    assert probe.seen == [inside, inside]
    assert amp_state() == outside


def test_backward_under_autocast_replays_the_forward_state(use_reentrant):
    """Forward without autocast, backward inside it: the rerun runs with autocast off (the
    op lists, dtype and promotion flag have no effect then), and the context's state is
    intact afterwards."""
    probe = AmpProbe()
    out = recompute(probe, leaf(2, 4), use_reentrant=use_reentrant)
    with tracer_autocast(core.AmpLevel.O1):
        inside = amp_state()
        out.sum().backward()
        assert amp_state() == inside
    assert [seen[0] for seen in probe.seen] == [core.AmpLevel.O0, core.AmpLevel.O0]


@pytest.mark.parametrize("level", ["O1", "O2"])
def test_auto_cast_training_parity(level, use_reentrant):
    """paddle.amp.auto_cast itself (a no-op for CPU tensors): same training, state restored."""
    before = amp_state()

    def build(recompute_on):
        model = nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.2), nn.ReLU(), nn.Linear(6, 1))
        return model, paddle.optimizer.SGD(0.05, parameters=model.parameters())

    def step(model, optimizer, i):
        with paddle.amp.auto_cast(level=level):
            loss = model(paddle.randn([4, 6])).mean()
        loss.backward()
        return loss

    plan = functools.partial(recompute_sublayers, names=["0", "1"], use_reentrant=use_reentrant)
    assert_loss_parity(build, step, steps=3, recompute_plan=plan)
    assert amp_state() == before


# --------------------------------------------------------------------------- BatchNorm


class BNBlock(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 5)
        self.bn = nn.BatchNorm1D(5)
        self.drop = nn.Dropout(0.3)

    def forward(self, x):
        return self.drop(nn.functional.relu(self.bn(self.fc(x))))


class BNNet(nn.Layer):
    def __init__(self, options=None):
        super().__init__()
        self.options = options
        self.blocks = nn.LayerList([BNBlock() for _ in range(3)])
        self.head = nn.Linear(5, 1)

    def forward(self, x):
        for i, block in enumerate(self.blocks):
            x = recompute(block, x, **self.options) if self.options and i != 1 else block(x)
        return self.head(x)


def test_batchnorm_statistics_updated_once_per_step(use_reentrant):
    def build(recompute_on):
        model = BNNet({"use_reentrant": use_reentrant} if recompute_on else None)
        return model, paddle.optimizer.Momentum(0.05, parameters=model.parameters())

    def step(model, optimizer, i):
        loss = (model(paddle.randn([8, 5]) * (i + 1)) ** 2).mean()
        loss.backward()
        return loss

    assert_loss_parity(build, step, steps=4)


def test_batchnorm_buffers_move_in_the_forward_only(use_reentrant):
    seed_all()
    block = BNBlock()
    x = leaf(8, 5)
    out = recompute(block, x, use_reentrant=use_reentrant)
    after_forward = [block.bn._mean.numpy(), block.bn._variance.numpy()]
    assert not np.array_equal(after_forward[0], np.zeros(5, "float32"))
    out.sum().backward()
    assert_tensors_equal([block.bn._mean, block.bn._variance], after_forward)


class StepCounter(nn.Layer):
    """Counts its training-mode forward calls in a buffer, updated in place."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.register_buffer("calls", paddle.zeros([1]))

    def forward(self, x):
        if self.training:
            paddle.assign(self.calls + 1, output=self.calls)
        return self.fc(x)


class HiddenStepCounter(StepCounter):
    """Counts its calls from the second on with ``set_value``, a write no in-place version
    shows (the first call, which the watch learns from, writes nothing)."""

    def __init__(self):
        super().__init__()
        self.armed = False

    def forward(self, x):
        if self.training and self.armed:
            self.calls.set_value((self.calls + 1).numpy())
        self.armed = True
        return self.fc(x)


def test_in_place_buffer_writes_are_seen_without_registering(use_reentrant):
    counter = StepCounter()
    recompute(counter, leaf(2, 3), use_reentrant=use_reentrant).sum().backward()
    assert counter.calls.item() == 1  # the rerun counted on a copy, put back afterwards


def test_register_stateful_layer_freezes_its_buffers(use_reentrant):
    from paddle_recompute._core import layers as _layers

    # leaf(...) * 1: a leaf input would stay itself (NOTE [ Saved leaves ]), leaving nothing to rerun
    counter = HiddenStepCounter()
    for _ in range(2):
        recompute(counter, leaf(2, 3) * 1, use_reentrant=use_reentrant).sum().backward()
    assert counter.calls.item() == 2  # not registered: the second rerun's write was not seen

    register_stateful_layer(HiddenStepCounter)
    try:
        counter = HiddenStepCounter()
        for _ in range(2):
            recompute(counter, leaf(2, 3) * 1, use_reentrant=use_reentrant).sum().backward()
        assert counter.calls.item() == 1
        assert counter.fc.weight.grad is not None
    finally:
        _layers._STATEFUL.remove(HiddenStepCounter)


def test_register_stateful_layer_rejects_non_layers():
    with pytest.raises(TypeError, match="Layer subclass"):
        register_stateful_layer(int)
