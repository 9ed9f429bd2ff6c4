"""mindformers 2.1.0's Llama, unmodified, trained under ``python -m paddle_mindspore`` against
real MindSpore 2.10 running the same script (recorded/mindformers_llama/,
``compat/record/record_mindformers_llama.py``).

The script (compat/mindformers_scripts/llama_train.py): a 2-layer ``LlamaForCausalLM`` (hidden
64, 4 heads, vocab 128, sequence 16, float32) under ``TransformerOpParallelConfig`` with
``recompute``, ``select_recompute`` and ``select_comm_recompute`` on, trained with
``mindspore.value_and_grad`` and ``nn.SGD`` from MindSpore's initial weights (loaded by
parameter name). mindformers builds the model through the parallel-only calls (``shard``,
``set_comm_fusion``, the auto-parallel context), which on one device record and compute as
MindSpore does. Each run is a subprocess, as a user runs it. Compared: the losses, the first
step's gradient of every parameter and every parameter after the last step (the script's
``--grads`` dump; recorded/mindformers_llama/grads.npz is MindSpore's).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from _mindformers_grads import assert_dumps_equal, assert_within_floor, load
from _mindformers_run import run_script
from _ms_helpers import COMPAT

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
# The same for each gradient and final weight, per parameter: its floor is the largest change of
# the entry (absolute, over its elements) in those noisy and reversed MindSpore runs; for a final
# weight, the change of what training moved it (final - initial), so the injected noise is not
# counted (compat/record/mindformers_grads.py). Measured: gradients at most 0.18x their floor
# (12 float32 ulps of the entry's largest element), final weights at most 1.0x (one ulp of a
# norm weight near 1.0, whose floor is that ulp; the embedding 48 ulps, 0.33x). 4x leaves room
# for a CPU whose BLAS blocks its sums differently.
GRAD_FLOORS = 4


def _run(tmp_path, *args: str) -> dict:
    return run_script(tmp_path, DRIVER, SCRIPT, RECORDED, *args)


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


def test_gradients_and_weights_within_mindspores_noise_floor(runs, record):
    floors = record["grads_floor"]
    assert all(0 < floors[key] < 1e-5 for key in floors), floors  # Llama trains every parameter
    assert_within_floor(runs["recompute"]["dump"], load(RECORDED / "grads.npz"), floors, GRAD_FLOORS)
    # MindSpore's own gradients and weights are the same with recompute off or selective only.
    assert record["grads_change_no_recompute"] == record["grads_change_select_only"] == 0.0


@pytest.mark.parametrize("kind", ["recompute", "select"])
def test_recompute_gradients_and_weights_bit_identical(runs, kind):
    assert_dumps_equal(runs[kind]["dump"], runs["plain"]["dump"], kind)


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
