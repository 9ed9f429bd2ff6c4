"""A region reruns from its own aliases of its inputs, so a caller may free the data of the
tensor objects it holds (NOTE [ Inputs as aliases ] in ``paddle_recompute/_core/identity.py``).

Paddle's ``PipelineParallel`` frees each output a stage has sent (``_release_output``); a stage
that passes its mask on as it is hands the pipeline the very object its recomputed blocks
took.  Here one process does what the pipeline does: ``_release_output`` on the stage's
outputs after the forward, before the backward.
"""

from __future__ import annotations

import numpy as np
import paddle
import pytest
from paddle import nn
from paddle.distributed.fleet.meta_parallel.pipeline_parallel import PipelineParallel

from paddle_recompute import policies, recompute

MODES = {
    "reentrant": {"use_reentrant": True},
    "non_reentrant": {"use_reentrant": False},
    "policy": {"use_reentrant": False, "policy": policies.save_matmuls},
}


def _release_output(outputs) -> None:
    """What the pipeline does to a stage's outputs once sent (it reads no field of its own)."""
    PipelineParallel._release_output(None, outputs)


class Block(nn.Layer):
    """``(h, mask) -> (h', mask)``: the mask passed on as it is; counts its forwards (in a
    list: a rerun puts the layer's own attributes back as the forward left them)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.calls = []

    def forward(self, h, mask):
        self.calls.append(1)
        return paddle.tanh(self.fc(h)) * mask, mask


def _stage(options, where: str, passed_by: str):
    """Two blocks; ``first``: the first recomputed, ``last``: the last, ``none``: plain.
    ``passed_by``: ``blocks`` (each block returns the mask it took), ``stage`` (the stage
    gives its mask to every block and returns it, as a decoder stack does)."""
    paddle.seed(7)
    blocks = [Block(), Block()]
    x = paddle.randn([4, 8])
    x.stop_gradient = False
    mask = (paddle.rand([4, 1]) > 0.3).astype("float32")

    def stage():
        h, m = x * 1.0, mask.clone()  # a micro-batch's own mask (the pipeline receives each)
        for i, block in enumerate(blocks):
            recomputed = (where == "first" and i == 0) or (where == "last" and i == 1)
            h, out = recompute(block, h, m, **options) if recomputed else block(h, m)
            m = out if passed_by == "blocks" else m
        return h, m

    return blocks, x, mask, stage


def _train(options, where: str, passed_by: str, steps: int = 2):
    """Losses, gradients and parameters after ``steps`` SGD steps, the outputs released."""
    blocks, x, mask, stage = _stage(options, where, passed_by)
    params = [p for b in blocks for p in b.parameters()]
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=params)
    losses, grads = [], []
    for _ in range(steps):
        h, m = stage()
        loss = (h * h).sum()
        _release_output((h.detach(), m))  # the pipeline sends h on as a copy; m is the mask itself
        assert not m._is_initialized()  # emptied, as the pipeline empties it
        loss.backward()
        losses.append(loss.numpy())
        grads.append([p.grad.numpy() for p in params] + [x.grad.numpy()])
        opt.step()
        opt.clear_grad()
        x.clear_gradient()
    return losses, grads, [p.numpy() for p in params], blocks


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("where", ["first", "last"])
@pytest.mark.parametrize("passed_by", ["blocks", "stage"])
def test_a_released_mask_the_region_took_does_not_break_its_rerun(mode, where, passed_by):
    """The mask the stage passes on is freed after the forward, as the pipeline frees a
    stage's sent outputs; the recomputed block still reruns, bit-exactly."""
    options = MODES[mode]
    losses, grads, params, blocks = _train(options, where, passed_by)
    ref_losses, ref_grads, ref_params, _ = _train(options, "none", passed_by)
    np.testing.assert_array_equal(losses, ref_losses)
    for got, ref in zip(grads, ref_grads, strict=True):
        for g, r in zip(got, ref, strict=True):
            np.testing.assert_array_equal(g, r)
    for p, r in zip(params, ref_params, strict=True):
        np.testing.assert_array_equal(p, r)
    recomputed = blocks[0] if where == "first" else blocks[1]
    assert len(recomputed.calls) == 4  # two steps, each a forward and a rerun


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("leaf", [False, True], ids=["activation", "received"])
def test_a_released_input_that_needs_a_gradient(mode, leaf):
    """A region input that needs a gradient freed by the caller after the forward: an
    activation, or a leaf (what a stage after the first receives); the rerun reads the
    region's alias of it."""
    options = MODES[mode]
    lin = nn.Linear(8, 8)
    calls = []

    def region(h):
        calls.append(1)
        return paddle.tanh(lin(h)) * h

    def grads(recomputed: bool):
        lin.clear_gradients()
        x = paddle.to_tensor(np.linspace(-1, 1, 32, dtype="float32").reshape(4, 8), stop_gradient=False)
        h = x if leaf else x * 2.0
        y = recompute(region, h, **options) if recomputed else region(h)
        loss = (y * y).sum()
        y2 = (y * 3.0).detach()
        _release_output((y2, h))  # h: the caller's object, passed on as it is
        assert not h._is_initialized()
        loss.backward()
        if leaf:  # the gradient still reaches the received tensor itself
            return [loss.numpy(), h.grad.numpy()] + [p.grad.numpy() for p in lin.parameters()]
        return [loss.numpy(), x.grad.numpy()] + [p.grad.numpy() for p in lin.parameters()]

    ref = grads(False)
    calls.clear()
    got = grads(True)
    assert len(calls) == 2  # the forward and its rerun
    for g, r in zip(got, ref, strict=True):
        np.testing.assert_array_equal(g, r)

