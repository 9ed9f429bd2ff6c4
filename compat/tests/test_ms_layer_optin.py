"""``.recompute()`` on plain Paddle Layers: absent unless asked for, works when asked, undoable."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
import textwrap

import numpy as np
import paddle
import pytest
from _ms_helpers import ROOT, Block, checkout_env, error_text

import paddle_mindspore as ms


def _calls_and_grads(block):
    """Forward calls during one forward + backward, and the gradients."""
    paddle.seed(0)
    x = paddle.randn([3, 4])
    x.stop_gradient = False
    Block.calls = 0
    block(x).sum().backward()
    return Block.calls, x.grad.numpy(), block.fc.weight.grad.numpy()


FRESH = textwrap.dedent("""
    import sys
    import numpy as np
    import paddle
    import paddle_recompute
    import paddle_mindspore as ms
    from paddle_mindspore import nn, ops
    hooks = len(sys.meta_path)
    cell = nn.SequentialCell([nn.Dense(2, 2), nn.ReLU()])
    cell.recompute()
    relu = ops.ReLU().recompute()
    ms.grad(lambda x: relu(cell(x)).sum())(ms.Tensor(np.ones((2, 2), np.float32)))
    assert not hasattr(paddle.nn.Layer, "recompute"), "paddle.nn.Layer.recompute exists"
    assert not hasattr(paddle.nn.Linear(2, 2), "recompute")
    assert "mindspore" not in sys.modules and len(sys.meta_path) == hooks
    print("clean")
""")


def test_a_fresh_process_using_the_layer_leaves_paddle_unchanged():
    """Importing and using paddle_mindspore adds nothing to paddle.nn.Layer."""
    result = subprocess.run([sys.executable, "-c", FRESH], cwd=ROOT, capture_output=True, text=True,
                            env=checkout_env(PYTHONWARNINGS="ignore"), timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "clean"


def test_install_opts_every_layer_in_and_uninstall_undoes_it():
    assert not ms.layer_recompute_installed() and not hasattr(paddle.nn.Layer, "recompute")
    paddle.seed(1)
    plain = Block()
    paddle.seed(1)
    block = Block()
    ms.install_layer_recompute()
    try:
        ms.install_layer_recompute()  # idempotent
        assert ms.layer_recompute_installed() and hasattr(plain, "recompute")
        assert block.recompute() is None
        assert isinstance(block, Block) and type(block) is not Block
        calls, *grads = _calls_and_grads(block)
        base_calls, *base = _calls_and_grads(plain)
        assert (calls, base_calls) == (2, 1)  # forward + recomputation, versus forward only
        for ours, theirs in zip(grads, base, strict=True):
            np.testing.assert_array_equal(ours, theirs)
    finally:
        ms.uninstall_layer_recompute()
    assert not ms.layer_recompute_installed() and not hasattr(paddle.nn.Layer, "recompute")
    assert type(block) is Block and not hasattr(block, "recompute")
    assert _calls_and_grads(block)[0] == 1  # plain again
    ms.uninstall_layer_recompute()  # a no-op now


def test_installed_method_has_mindspores_signature_and_errors():
    ms.install_layer_recompute()
    try:
        block = Block()
        _, message = error_text("Cell.recompute(bad kwarg)")
        with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
            block.recompute(foo=1)
        with pytest.raises(TypeError, match="^too many positional arguments$"):
            block.recompute(True)
        assert type(block) is Block  # a rejected call opts nothing in
        assert inspect.signature(paddle.nn.Layer.recompute) == inspect.signature(ms.nn.Cell.recompute)
    finally:
        ms.uninstall_layer_recompute()


def test_install_refuses_to_replace_a_recompute_paddle_has(monkeypatch):
    monkeypatch.setattr(paddle.nn.Layer, "recompute", lambda self: "paddle's own", raising=False)
    with pytest.raises(RuntimeError, match="already has a 'recompute' attribute"):
        ms.install_layer_recompute()
    assert paddle.nn.Layer.recompute(Block()) == "paddle's own"


def test_enable_then_disable_one_layer():
    block = ms.enable_layer_recompute(Block())
    block.recompute(use_reentrant=False)
    assert _calls_and_grads(block)[0] == 2
    assert ms.disable_layer_recompute(block) is block
    assert type(block) is Block and not hasattr(block, "recompute")
    assert _calls_and_grads(block)[0] == 1
    with pytest.raises(TypeError, match="disable_layer_recompute: expected a paddle.nn.Layer"):
        ms.disable_layer_recompute(object())


def test_disable_on_a_cell_turns_its_recompute_off():
    cell = ms.nn.Dense(4, 4)
    cell.recompute()
    ms.disable_layer_recompute(cell)
    assert cell._ms_recompute is None and hasattr(cell, "recompute")
