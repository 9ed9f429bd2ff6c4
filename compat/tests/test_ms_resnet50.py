"""Program 4: ResNet-50 with the recompute tutorial's configuration, trained a few steps.

``self.relu.recompute()`` (a primitive: recomputed here, as in MindSpore's graph mode) and
``resnet_block.recompute()`` on the residual blocks; synthetic CIFAR-10-shaped batches. Losses,
every parameter and every BatchNorm statistic after training are bit for bit equal to the same
training without recomputation (BatchNorm updates its statistics once per step either way).
"""

from __future__ import annotations

import numpy as np
import pytest
from _ms_helpers import load_definitions

import paddle_mindspore as ms

STEPS, BATCH, SEED = 2, 2, 3


@pytest.fixture(scope="module")
def program() -> dict:
    return load_definitions("d_resnet50_recompute.py")


def _train(program: dict, recompute: bool, monkeypatch) -> tuple[list, list, list, dict]:
    """Train; also count the residual blocks' and the stem ReLU primitive's computations."""
    calls = {"blocks": 0, "stem_relu": 0}
    block_construct = program["ResidualBlock"].construct

    def counting_construct(self, x):
        calls["blocks"] += 1
        return block_construct(self, x)

    ms.set_seed(SEED)
    net = program["resnet50"](10, recompute=recompute)
    relu_compute = net.relu.compute

    def counting_relu(x):
        calls["stem_relu"] += 1
        return relu_compute(x)

    net.relu.compute = counting_relu
    with monkeypatch.context() as patch:
        patch.setattr(program["ResidualBlock"], "construct", counting_construct)
        losses = program["train"](net, STEPS, BATCH, SEED)
    params = [p.numpy() for p in net.parameters()]
    buffers = [b.numpy() for b in net.buffers()]
    return losses, params, buffers, calls


def test_recompute_configuration_is_the_tutorials(program):
    net = program["resnet50"](10)
    assert net.relu._recompute is True
    for stage in (net.layer1, net.layer2, net.layer3, net.layer4):
        blocks = list(stage)
        assert blocks[0]._ms_recompute is None
        assert all(b._ms_recompute is not None and b._ms_recompute.use_reentrant for b in blocks[1:])
    assert sum(1 for _ in net.parameters()) == 161  # 53 conv weights, 53 BN (gamma, beta), Dense w and b


def test_training_is_bitwise_equal_with_and_without_recompute(program, monkeypatch):
    losses, params, buffers, calls = _train(program, True, monkeypatch)
    base_losses, base_params, base_buffers, base_calls = _train(program, False, monkeypatch)
    # 16 blocks run once per step; the 12 that are not first in their stage run again in backward,
    # and so does the stem's recompute-marked ReLU primitive
    assert base_calls == {"blocks": 16 * STEPS, "stem_relu": STEPS}
    assert calls == {"blocks": 28 * STEPS, "stem_relu": 2 * STEPS}
    assert losses == base_losses
    assert all(np.isfinite(losses)) and losses[0] != losses[1]
    for ours, base in zip(params, base_params, strict=True):
        np.testing.assert_array_equal(ours, base)
    for ours, base in zip(buffers, base_buffers, strict=True):  # BatchNorm moving statistics
        np.testing.assert_array_equal(ours, base)
    assert any(not np.array_equal(b, 0) and not np.array_equal(b, 1) for b in buffers)
