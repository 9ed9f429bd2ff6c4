"""mindformers 2.1.0's Llama, unmodified, trained under ``python -m paddle_mindspore`` against
real MindSpore 2.10 running the same script (recorded/mindformers_llama/,
``compat/record/record_mindformers_llama.py``).

The script (compat/mindformers_scripts/llama_train.py): a 2-layer ``LlamaForCausalLM`` (hidden
64, 4 heads, vocab 128, sequence 16, float32) under ``TransformerOpParallelConfig`` with
``recompute``, ``select_recompute`` and ``select_comm_recompute`` on, trained with
``mindspore.value_and_grad`` and ``nn.SGD`` from MindSpore's initial weights (loaded by
parameter name). mindformers builds the model through the parallel-only calls (``shard``,
``set_comm_fusion``, the auto-parallel context), which on one device record and compute as
MindSpore does. Each run is a subprocess, as a user runs it.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from _ms_helpers import COMPAT, checkout_env

RECORDED = COMPAT / "tests" / "recorded" / "mindformers_llama"
SCRIPT = COMPAT / "mindformers_scripts" / "llama_train.py"
DRIVER = COMPAT / "tests" / "_mindformers_llama_driver.py"
# How far the layer may sit from MindSpore, in units of MindSpore's own floor: the largest
# change in any step's loss that MindSpore itself shows when run again with 1e-6 relative noise
# on its initial weights (4 seeds) or with each batch's rows reversed (the same sums in another
# order): one float32 ulp of the loss (4.8e-7 at a loss of 4.9). Paddle's float32 kernels round
# in another order than MindSpore's CPU kernels (measured on 32x64 inputs: MatMul, ReduceSum,
# ReduceMean and Softmax differ by 1-8 ulps of their outputs), which moves the loss by a few
# ulps: measured 2, 4, 2, 2 ulps over the four steps (4x the floor at most). 8x leaves room for a
# CPU whose BLAS blocks its sums differently.
FLOORS = 8


def _run(tmp_path, *args: str) -> dict:
    out = tmp_path / "out.json"
    counts = tmp_path / "counts.json"
    command = [sys.executable, "-m", "paddle_mindspore", str(DRIVER), str(counts), str(SCRIPT),
               "--steps", "4", "--init", str(RECORDED / "init.npz"), "--out", str(out), *args]
    done = subprocess.run(command, cwd=tmp_path, env=checkout_env(), capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    return {**json.loads(out.read_text()), **json.loads(counts.read_text())}


@pytest.fixture(scope="module")
def record() -> dict:
    return json.loads((RECORDED / "run.json").read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    return {kind: _run(tmp_path_factory.mktemp(kind), *flags)
            for kind, flags in (("recompute", ()), ("plain", ("--no-recompute",)),
                                ("select", ("--select-only",)))}


def test_parameter_names_and_shapes_are_mindspores(runs, record):
    for run in runs.values():
        assert run["params"] == record["params"]


def test_losses_within_mindspores_noise_floor(runs, record):
    floor = max(record["floor"])
    assert 0 < floor < 1e-5, floor
    losses = np.array(runs["recompute"]["losses"])
    expected = np.array(record["losses"])
    assert len(losses) == record["steps"] >= 3
    np.testing.assert_allclose(losses, expected, rtol=0, atol=FLOORS * floor,
                               err_msg=f"floor {floor:.3g}: {np.abs(losses - expected) / floor} floors")
    # MindSpore's own losses are the same with recompute off; so are the layer's, exactly.
    np.testing.assert_array_equal(record["losses_no_recompute"], record["losses"])


def test_recompute_marks_rerun_the_decoder_layers(runs, record):
    """``recompute=True`` makes mindformers call ``Cell.recompute()`` on every decoder layer:
    each step runs each layer's forward twice (the rerun in backward), its SiLU too; without it,
    once. The losses are the same (recompute changes where activations come from, not the
    arithmetic)."""
    steps, layers = record["steps"], runs["plain"]["layers"]
    full, plain = runs["recompute"], runs["plain"]
    assert layers == full["layers"] == 2
    assert plain["calls"] == plain["silu"] == steps * layers
    assert full["calls"] == full["silu"] == 2 * steps * layers
    np.testing.assert_array_equal(full["losses"], plain["losses"])


def test_select_recompute_marks_rerun_their_primitives(runs, record):
    """``select_recompute`` alone: mindformers calls ``Primitive.recompute()`` on each layer's
    feed-forward ``mul`` and SiLU and on attention's primitives, and ``Cell.recompute()`` on its
    rotary-embedding cell (``LLamaAttention.__init__``). Per layer and step, ``Mul`` then runs
    more often by: the rotary cell's rerun in backward (2 ``Mul`` a call, called for q and k),
    and attention's scaling ``mul`` computed again (1); counted per primitive instance
    (test_ms_mindformers_recompute_config.py), the feed-forward ``mul`` and the SiLU run once.
    The decoder layers run once.
    MindSpore ignores the marks in PyNative mode, so its losses are its plain ones; the layer
    recomputes (difference 2), with the same losses bit for bit."""
    steps, layers = record["steps"], 2
    select, plain = runs["select"], runs["plain"]
    assert select["mul"] == plain["mul"] + steps * layers * (2 * 2 + 1)
    assert select["silu"] == plain["silu"] == steps * layers
    assert select["calls"] == plain["calls"] == steps * layers
    np.testing.assert_array_equal(record["losses_select_only"], record["losses_no_recompute"])
    np.testing.assert_array_equal(select["losses"], plain["losses"])
