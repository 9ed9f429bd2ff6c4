"""Program 3: the 10-block network of MindSpore's "Recomputation" tutorial.

- Memory, measured like the tutorial (peak allocated memory of one gradient run), with and
  without ``b.recompute()`` on each block: the tutorial reports 167 MB -> 69 MB (0.41x).
- Results bit for bit equal with and without recomputation, dropout active (keep_prob 0.9),
  for every way of recomputing the blocks.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from _ms_helpers import COMPAT, load_definitions

import paddle_mindspore as ms
from paddle_mindspore import nn, ops

MINDSPORE_RATIO = 69 / 167


def _measure_module():
    spec = importlib.util.spec_from_file_location("compat_measure_memory", COMPAT / "measure_memory.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_full_size_memory_and_bitwise_equal_output(memory_stats):
    """The tutorial's programs at full size (input 8x128x16x32), as compat/measure_memory.py runs them."""
    report = _measure_module().measure_all()
    plain, recomputed = report["variants"]["without recompute"], report["variants"]["with b.recompute()"]
    assert report["ratio"] <= MINDSPORE_RATIO, report
    assert recomputed["peak_bytes"] < plain["peak_bytes"]
    assert recomputed["output_sha256"] == plain["output_sha256"]  # dropout active, same seed


@pytest.fixture(scope="module")
def definitions() -> tuple[dict, dict]:
    return load_definitions("c_block_tutorial.py"), load_definitions("c_block_tutorial_recompute.py")


def _grad(namespace: dict, monkeypatch, block_options: dict | None = None, mark_primitives: bool = False):
    """Gradient of the tutorial's Grad(Net()) on a small input (8 x 128 x 2 x 4), seed fixed."""
    with monkeypatch.context() as patch:
        if block_options is not None:
            original = nn.Cell.recompute
            patch.setattr(nn.Cell, "recompute", lambda self: original(self, **block_options))
        if mark_primitives:
            original_init = ops.Primitive.__init__

            def marked_init(self, *args, **kwargs):
                original_init(self, *args, **kwargs)
                self.recompute()

            patch.setattr(ops.Primitive, "__init__", marked_init)
        network = namespace["Net"]()
    ms.set_seed(7)
    x = ms.Tensor(np.random.RandomState(0).rand(8, 128, 2, 4).astype(np.float32))
    return namespace["Grad"](network)(x).numpy()


@pytest.mark.parametrize("options", [
    {}, {"use_reentrant": False}, {"use_reentrant": False, "early_stop": False}, {"output_recompute": True},
], ids=["reentrant", "non_reentrant", "non_reentrant_no_early_stop", "output_recompute"])
def test_block_recompute_is_bitwise_equal_with_dropout(definitions, monkeypatch, options):
    plain, recomputed = definitions
    expected = _grad(plain, monkeypatch)
    np.testing.assert_array_equal(_grad(recomputed, monkeypatch, options), expected)


def test_every_primitive_recomputed_is_bitwise_equal_with_dropout(definitions, monkeypatch):
    plain, _ = definitions
    expected = _grad(plain, monkeypatch)
    np.testing.assert_array_equal(_grad(plain, monkeypatch, mark_primitives=True), expected)


def test_dropout_is_active(definitions, monkeypatch):
    """Different seeds give different gradients: the comparisons above do exercise dropout."""
    plain, _ = definitions
    first = _grad(plain, monkeypatch)
    ms.set_seed(8)
    network = plain["Net"]()
    other = plain["Grad"](network)(ms.Tensor(np.random.RandomState(0).rand(8, 128, 2, 4).astype(np.float32)))
    assert not np.array_equal(first, other.numpy())
