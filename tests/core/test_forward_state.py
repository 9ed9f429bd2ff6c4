"""State a region's forward writes to its layers is put back for the rerun, for any layer.

See NOTE [ Forward writes ] in ``paddle_recompute/_core/written.py``.  Every case trains a few
steps with and without recompute, in both modes and in a policy region, and compares the loss,
the input's and every parameter's gradient, every buffer and every counter at every step, and
the parameters after each optimizer step, bit for bit.
"""

from __future__ import annotations

import numpy as np
import paddle
import pytest
from _rc_helpers import seed_all
from paddle import nn

from paddle_recompute import RecomputeError, policies, recompute
from paddle_recompute.testing import assert_tensors_equal

MODES = {
    "reentrant": {"use_reentrant": True},
    "non_reentrant": {"use_reentrant": False},
    "policy": {"use_reentrant": False, "policy": policies.save_matmuls},
    "policy_recompute_all": {"use_reentrant": False, "policy": policies.recompute_all},
}


@pytest.fixture(params=list(MODES))
def options(request) -> dict:
    """Both mechanisms, and policy regions (one skips the kept matmuls in its rerun, spectral
    norm's power iteration among them; one reruns every operator)."""
    return MODES[request.param]


class Region(nn.Layer):
    """Runs ``inner`` as one region (``options``), or plainly (None); ``twice`` runs it as two
    regions in a row, so two regions write the same layer's state."""

    def __init__(self, inner: nn.Layer, options: dict | None, twice: bool = False):
        super().__init__()
        self.inner = inner
        self.options = options
        self.twice = twice

    def forward(self, x):
        for _ in range(2 if self.twice else 1):
            x = recompute(self.inner, x, **self.options) if self.options else self.inner(x)
        return x


class BufferCounter(nn.Layer):
    """Counts its calls in a buffer, in place; its output depends on the count."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.register_buffer("count", paddle.zeros([1]))

    def forward(self, x):
        paddle.assign(self.count + 1, output=self.count)
        return paddle.tanh(self.fc(x) * self.count)


class ReassignedCounter(BufferCounter):
    """Counts its calls in a buffer it reassigns."""

    def forward(self, x):
        self.count = self.count + 1
        return paddle.tanh(self.fc(x) * self.count)


class AttributeCounter(nn.Layer):
    """Counts its calls in a Python attribute; its output depends on the count."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.count = 0

    def forward(self, x):
        self.count += 1
        return paddle.tanh(self.fc(x) * float(self.count))


def _spectral(layer):
    return nn.utils.spectral_norm(layer)


CASES = {
    "spectral_norm_linear": (lambda: _spectral(nn.Linear(8, 8)), [4, 8]),
    "spectral_norm_conv1d": (lambda: _spectral(nn.Conv1D(3, 4, 3)), [2, 3, 8]),
    "spectral_norm_conv2d": (lambda: _spectral(nn.Conv2D(3, 4, 3)), [2, 3, 6, 6]),
    "spectral_norm_conv3d": (lambda: _spectral(nn.Conv3D(2, 3, 3)), [1, 2, 4, 4, 4]),
    "spectral_norm_in_block": (
        lambda: nn.Sequential(_spectral(nn.Linear(8, 8)), nn.Tanh(), nn.Linear(8, 8)), [4, 8]),
    "batchnorm1d": (lambda: nn.Sequential(nn.Linear(5, 5), nn.BatchNorm1D(5)), [8, 5]),
    "batchnorm2d": (lambda: nn.Sequential(nn.Conv2D(3, 4, 3), nn.BatchNorm2D(4)), [2, 3, 6, 6]),
    "buffer_counter": (BufferCounter, [3, 6]),
    "reassigned_counter": (ReassignedCounter, [3, 6]),
    "attribute_counter": (AttributeCounter, [3, 6]),
}


def _counters(model) -> dict:
    return {name: layer.count for name, layer in model.named_sublayers(include_self=True)
            if isinstance(getattr(layer, "count", None), int)}


def train(case: str, options: dict | None, steps: int = 3, twice: bool = False) -> tuple:
    """Per step: loss, input gradient, parameter gradients, buffers, counters and the
    parameters after the optimizer step; and how often the inner layer's forward ran."""
    make, shape = CASES[case]
    seed_all()
    model = Region(make(), options, twice)
    runs = []
    model.inner.register_forward_pre_hook(lambda layer, args: runs.append(1))
    optimizer = paddle.optimizer.Momentum(0.05, parameters=model.parameters())
    history = []
    for _ in range(steps):
        x = paddle.randn(shape)
        x.stop_gradient = False
        loss = (model(x) ** 2).mean()
        loss.backward()
        record = {
            "loss": loss.numpy(), "x.grad": x.grad.numpy(),
            "grads": {n: p.grad.numpy() for n, p in model.named_parameters() if p.grad is not None},
            "buffers": {n: b.numpy() for n, b in model.named_buffers()},
            "counters": _counters(model),
        }
        optimizer.step()
        optimizer.clear_grad()
        record["params"] = {n: p.numpy() for n, p in model.named_parameters()}
        history.append(record)
    return history, len(runs)


def _assert_same(case: str, options: dict, twice: bool = False) -> None:
    expected, plain_runs = train(case, None, twice=twice)
    actual, runs = train(case, options, twice=twice)
    assert expected[0]["grads"], "the case trains nothing"
    assert runs == 2 * plain_runs  # every region reran once per step
    assert_tensors_equal(actual, expected)


@pytest.mark.parametrize("case", list(CASES))
def test_forward_state_matches_no_recompute(case, options):
    _assert_same(case, options)


# An in-place counter read by an operator cannot run twice plainly (Paddle refuses the
# backward); a spectral-norm layer shared by two reentrant regions sums its weight's gradient
# paths per region, in another order than plain Paddle (not a matter of state).
TWICE = [(case, mode) for case in ("reassigned_counter", "attribute_counter") for mode in MODES]
TWICE += [("spectral_norm_linear", "non_reentrant"), ("spectral_norm_linear", "policy")]


@pytest.mark.parametrize(("case", "mode"), TWICE)
def test_two_regions_writing_one_layer(case, mode):
    """Each rerun starts from its own region's start and keeps the later region's writes."""
    _assert_same(case, MODES[mode], twice=True)


def test_spectral_norm_rerun_sees_the_pre_forward_vectors(use_reentrant):
    """The numbers of the issue: without the rewind the gradient differs."""
    seed_all()
    layer = nn.utils.spectral_norm(nn.Linear(8, 8))
    x = paddle.randn([4, 8])
    u_before = layer.weight_u.numpy()
    recompute(layer, x, use_reentrant=use_reentrant).sum().backward()
    u_after = layer.weight_u.numpy()
    assert not np.array_equal(u_before, u_after)  # the forward moved it once
    recompute_grad = layer.weight_orig.grad.numpy()

    seed_all()
    plain = nn.utils.spectral_norm(nn.Linear(8, 8))
    plain(paddle.randn([4, 8])).sum().backward()
    np.testing.assert_array_equal(plain.weight_u.numpy(), u_after)  # and only once
    np.testing.assert_array_equal(recompute_grad, plain.weight_orig.grad.numpy())


class LateWriter(nn.Layer):
    """Writes its buffer in place from its second call on: its first call, which the watch
    learns from, shows no write."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.register_buffer("scale", paddle.ones([1]))
        self.seen = [0]  # a list written in place: not state the rerun puts back

    def forward(self, x):
        self.seen[0] += 1
        if self.seen[0] > 2:  # the second region's forward (the first one's rerun is call 2)
            self.scale.scale_(2.0)
        return self.fc(x) * self.scale


def test_unlearned_in_place_write_raises(use_reentrant):
    layer = LateWriter()
    x = paddle.randn([2, 4])
    x.stop_gradient = False
    recompute(layer, x, use_reentrant=use_reentrant).sum().backward()
    out = recompute(layer, x, use_reentrant=use_reentrant)
    with pytest.raises(RecomputeError, match=r"LateWriter\.scale.*register_stateful_layer"):
        out.sum().backward()
