"""compat/saved_on_disk.py: the zoo check's run without recompute, its saved tensors in files.

compat/zoo.py uses it for models whose run without recompute does not fit in the machine's
memory (``SAVED_ON_DISK``: cait_m48_448). It must be that run exactly (same losses, gradients
and logits, bit for bit), hold fewer bytes than it, and leave no file or hook behind.
"""

from __future__ import annotations

import contextlib
import json

import numpy as np
import paddle
import pytest
from _ms_helpers import ROOT
from paddle.base import core

from paddle_recompute._core import hooks

RECORDED = ROOT / "compat" / "tests" / "recorded" / "zoo"


@pytest.fixture
def disk(compat_path):
    import saved_on_disk

    return saved_on_disk


def _attention():
    """A transformer layer: its attention saves transposed views (strides and offsets)."""
    paddle.seed(3)
    return paddle.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0), paddle.randn([2, 24, 64])


def _held_after_forward(net, x, context):
    """Host bytes held between forward and backward, the loss, and the parameters' gradients."""
    for p in net.parameters():
        p.clear_gradient()
    before = core.host_memory_stat_current_value("Allocated", 0)
    with context() as files:
        loss = net(x).tanh().pow(2).mean()
        held = core.host_memory_stat_current_value("Allocated", 0) - before
        loss.backward()
    return held, float(loss), [p.grad.numpy().copy() for p in net.parameters()], files


def test_same_gradients_fewer_bytes_no_files_left(disk):
    net, x = _attention()
    plain_held, plain_loss, plain_grads, _ = _held_after_forward(net, x, contextlib.nullcontext)
    disk_held, disk_loss, disk_grads, files = _held_after_forward(net, x, disk.saved_on_disk)
    assert disk_loss == plain_loss
    for a, b in zip(plain_grads, disk_grads, strict=True):
        np.testing.assert_array_equal(a, b)
    assert files.count >= 10 and files.nbytes > 0
    # what went to disk is no longer held: the saved activations, less what the files' bookkeeping
    # and the layer's outputs keep (the held bytes differ by most of what was written)
    assert disk_held < plain_held - files.nbytes // 2
    assert not files.directory.exists()
    assert not hooks.active_frames()


def _grad_peak(net, x, context):
    """Host bytes at the peak of forward and ``paddle.grad`` above the start, and the gradients."""
    before = core.host_memory_stat_current_value("Allocated", 0)
    core.host_memory_stat_reset_peak_value("Allocated", 0)
    with context() as files:
        grads = paddle.grad(net(x).tanh().pow(2).mean(), net.parameters())
    peak = core.host_memory_stat_peak_value("Allocated", 0) - before
    return peak, [g.numpy() for g in grads], files


def test_paddle_grad_reads_the_files_in_place(disk):
    """``paddle.grad`` (the layer's ``value_and_grad``) keeps what backward read until it ends:
    read into memory, every saved tensor would be held again at its peak. Mapped from the
    files, they are not the allocator's: the peak is lower by most of what went to disk."""
    net, x = _attention()
    plain_peak, plain_grads, _ = _grad_peak(net, x, contextlib.nullcontext)
    disk_peak, disk_grads, files = _grad_peak(net, x, disk.saved_on_disk)
    for a, b in zip(plain_grads, disk_grads, strict=True):
        np.testing.assert_array_equal(a, b)
    assert disk_peak < plain_peak - files.nbytes // 2


def test_a_second_backward_reads_the_files_again(disk):
    net, x = _attention()
    with disk.saved_on_disk() as files:
        loss = net(x).pow(2).mean()
        first = paddle.grad(loss, net.parameters(), retain_graph=True)
        second = paddle.grad(loss, net.parameters())
    assert files.count > 0
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_bfloat16_and_integer_tensors_come_back_as_they_were(disk):
    """numpy has no bfloat16: its values go to the file as uint16, which Paddle reads back as
    bfloat16. A boolean mask saved by ``where`` comes back as bool."""
    x = paddle.randn([4]).astype("bfloat16")
    x.stop_gradient = False
    w = paddle.randn([4])
    w.stop_gradient = False

    def loss():
        return (x * x * x).astype("float32").sum() + (w * paddle.where(w > 0, w, w * 2)).sum()

    loss().backward()
    plain = x.grad.numpy().copy(), w.grad.numpy().copy()
    x.clear_gradient()
    w.clear_gradient()
    with disk.saved_on_disk() as files:
        loss().backward()
    assert files.count >= 4
    np.testing.assert_array_equal(x.grad.numpy(), plain[0])
    np.testing.assert_array_equal(w.grad.numpy(), plain[1])


def test_zoo_check_with_the_plain_run_on_disk(zoo, monkeypatch):
    """The path cait_m48_448 takes, on a small attention model: the run without recompute on disk
    gives the same losses and logits as in memory, and the whole check passes against MindSpore."""
    rec = json.loads((RECORDED / "mobilevit_xx_small.json").read_text())
    model = zoo.zoo_case.prepare(rec["model"])
    in_memory = zoo.zoo_case.run(model, rec["size"], rec["scales"])
    monkeypatch.setattr(zoo, "SAVED_ON_DISK", {rec["model"]})
    row = zoo.blank_row(rec["model"], rec["family"])
    on_disk = zoo.plain_run(row, model, rec["size"], rec["scales"])
    assert on_disk["losses"] == in_memory["losses"]
    np.testing.assert_array_equal(on_disk["train_logits"], in_memory["train_logits"])
    assert row["saved_on_disk_bytes"] > 0
    row = zoo.check(rec)
    assert zoo.passed(row) and row["saved_on_disk_bytes"] > 0, row["error"]
    assert "saved on disk" in zoo.table([row])
