"""mindformers 2.1.0's Qwen3 on its training-graph path (``TrainingQwen3ForCausalLM``),
unmodified, trained under ``python -m paddle_mindspore`` against real MindSpore 2.10 running
the same script (recorded/mindformers_qwen3/, ``compat/record/record_mindformers_qwen3.py``).

The script (compat/mindformers_scripts/qwen3_train.py): a 2-layer Qwen3 (hidden 32, 4 heads of
8, MLP 64, vocab 128, sequence 16, float32) trained 4 steps in GRAPH_MODE with
``mindspore.value_and_grad`` and ``nn.SGD`` from MindSpore's initial weights (loaded by
parameter name), under five ``TransformerRecomputeConfig`` variants: none, ``full``
(``recompute=True``), ``select``, ``comm`` (``select_comm_recompute``) and ``all``. mindformers
builds it through ``Morph``, ``RmsNorm``, ``FlashAttentionScore`` and the generated ``*Ext``
primitives, ``mindspore.runtime.set_memory`` and the parallel-only calls, which on one device
compute as MindSpore documents.

The ground truth is MindSpore's arithmetic with the primitives its CPU build has no kernel for
(``RmsNorm``, ``Outer``, ``FlashAttentionScore``, the embedding's backward) as compositions of
MindSpore CPU ops (the recorder's docstring lists them). The layer computes ``RmsNorm`` and
``FlashAttentionScore`` with the same formulas in the same order (``Outer`` and the embedding
give the same numbers either way), so the two differ only by each framework's float rounding in
the kernels underneath. Each run is a subprocess, as a user runs it. Compared: the losses, the
first step's gradient of every trained parameter and every parameter after the last step (the
script's ``--grads`` dump; recorded/mindformers_qwen3/grads.npz is MindSpore's, recorded with
recompute all on).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from _mindformers_grads import assert_dumps_equal, assert_within_floor, load
from _mindformers_run import run_script
from _ms_helpers import COMPAT

RECORDED = COMPAT / "tests" / "recorded" / "mindformers_qwen3"
SCRIPT = COMPAT / "mindformers_scripts" / "qwen3_train.py"
DRIVER = COMPAT / "tests" / "_mindformers_qwen3_driver.py"
VARIANTS = ("none", "full", "select", "comm", "all")
# How far the layer may sit from MindSpore, in units of MindSpore's own floor: the largest
# change in any step's loss that MindSpore itself shows when run again with 1e-6 relative noise
# on its initial weights (4 seeds) or with each batch's rows reversed: one float32 ulp of the
# loss (4.8e-7 at a loss of 4.9; steps 0, 1 and 3 moved by none). Paddle's float32 kernels round
# in another order than MindSpore's CPU kernels (as with Llama, test_ms_mindformers_llama.py:
# MatMul, ReduceSum, ReduceMean and Softmax differ by 1-8 ulps of their outputs), which moves the
# loss by a few ulps: measured 4, 4, 4, 3 ulps over the four steps. 8x leaves room for a CPU
# whose BLAS blocks its sums differently.
FLOORS = 8
# The same for each gradient and final weight, per parameter: its floor is the largest change of
# the entry (absolute, over its elements) in those noisy and reversed MindSpore runs; for a final
# weight, the change of what training moved it (final - initial), so the injected noise is not
# counted (compat/record/mindformers_grads.py). Measured (every variant the same): gradients at
# most 0.22x their floor (5.2e-8 absolute, 15 float32 ulps of the entry's largest element), final
# weights at most 1.0x (one ulp of a norm weight near 1, where MindSpore's own floor is that ulp;
# 1.2e-7 absolute, 9 ulps). 4x leaves room for a CPU whose BLAS blocks its sums differently.
GRAD_FLOORS = 4
LAYER = "model.decoder.layers.{}."
# primitives inside each decoder layer that run once a step when nothing reruns them
IN_LAYER = ("input_layernorm.norm", "pre_mlp_layernorm.norm", "self_attention.q_layernorm.norm",
            "self_attention.k_layernorm.norm", "self_attention.core_attention.flash_attention",
            "mlp.activation_func.silu", "mlp.mul")


def _run(tmp_path, variant: str) -> dict:
    return run_script(tmp_path, DRIVER, SCRIPT, RECORDED, "--recompute", variant)


@pytest.fixture(scope="module")
def record() -> dict:
    return json.loads((RECORDED / "run.json").read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    return {variant: _run(tmp_path_factory.mktemp(variant), variant) for variant in VARIANTS}


def _layer_runs(run: dict, layer: int) -> dict:
    return {name: run["runs"][LAYER.format(layer) + name] for name in IN_LAYER}


def test_parameter_names_and_shapes_are_mindspores(runs, record):
    assert len(record["params"]) == 19
    for run in runs.values():
        assert run["params"] == record["params"]


def test_losses_within_mindspores_noise_floor(runs, record):
    floor = max(record["floor"])
    assert 0 < floor < 1e-5, floor
    assert record["steps"] == 4
    for variant, run in runs.items():
        losses, expected = np.array(run["losses"]), np.array(record["losses"][variant])
        np.testing.assert_allclose(
            losses, expected, rtol=0, atol=FLOORS * floor,
            err_msg=f"{variant}: floor {floor:.3g}: {np.abs(losses - expected) / floor} floors")
    # MindSpore's losses are the same for every variant; so are the layer's, exactly.
    for variant in VARIANTS:
        np.testing.assert_array_equal(record["losses"][variant], record["losses"]["none"])
        np.testing.assert_array_equal(runs[variant]["losses"], runs["none"]["losses"])


@pytest.mark.parametrize("variant", VARIANTS)
def test_gradients_and_weights_within_mindspores_noise_floor(runs, record, variant):
    floors = record["grads_floor"]
    assert len(floors) == 2 * len(record["params"])
    assert all(0 < floor < 1e-5 for floor in floors.values()), floors
    assert_within_floor(runs[variant]["dump"], load(RECORDED / "grads.npz"), floors, GRAD_FLOORS)
    # MindSpore's own gradients and weights are the same for every variant.
    assert record["grads_change"] == dict.fromkeys(VARIANTS, 0.0)


@pytest.mark.parametrize("variant", ("full", "select", "comm", "all"))
def test_recompute_gradients_and_weights_bit_identical(runs, variant):
    assert_dumps_equal(runs[variant]["dump"], runs["none"]["dump"], variant)


def _marks(marks: list) -> list:
    return [(m["name"], m["class"], m["method"], m["args"]) for m in marks]


def test_recompute_marks_are_mindspores(runs, record):
    """mindformers marks the same cells and primitives as under MindSpore: in every variant the
    ``Reshape`` primitives its linear layers mark when built; each ``TransformerLayer`` for
    ``recompute=True`` (``full``, ``all``: then the selective patterns are not applied); the
    MLP's ``mul`` and SiLU for ``select``; the norms' ``RmsNorm`` (``recompute_comm_op``) for
    ``comm``."""
    for variant in VARIANTS:
        assert _marks(runs[variant]["marks"]) == _marks(record["recompute_marks"][variant]["marks"]), variant
    full = {m[0] for m in _marks(record["recompute_marks"]["full"]["marks"]) if m[1] == "TransformerLayer"}
    assert full == {"model.decoder.layers.0", "model.decoder.layers.1"}
    select = {m[0] for m in _marks(record["recompute_marks"]["select"]["marks"]) if m[1] in ("Mul", "SiLU")}
    assert select == {LAYER.format(i) + n for i in (0, 1) for n in ("mlp.mul", "mlp.activation_func.silu")}


def test_full_recompute_reruns_each_layer(runs, record):
    """``recompute=True``: each decoder layer's forward runs twice a step (the rerun in
    backward), its norms (``RmsNorm``), attention (``FlashAttentionScore``) and MLP primitives
    with it; without it, once. ``all`` is ``full`` (mindformers skips the selective patterns
    on a fully recomputed layer). The losses are the same bit for bit."""
    steps, layers = record["steps"], runs["none"]["layers"]
    assert layers == 2
    assert runs["none"]["calls"] == steps * layers
    for variant in ("full", "all"):
        assert runs[variant]["calls"] == 2 * steps * layers
        for layer in range(layers):
            assert _layer_runs(runs["none"], layer) == dict.fromkeys(IN_LAYER, steps)
            assert _layer_runs(runs[variant], layer) == dict.fromkeys(IN_LAYER, 2 * steps), variant
    assert runs["all"]["runs"] == runs["full"]["runs"]


def test_select_recompute_reruns_the_silu(runs, record):
    """``select_recompute``: the MLP's SiLU runs again in backward (the gated ``mul`` saves its
    output), once more a step; the marked ``mul`` is not rerun, since nothing in backward reads
    its output (``linear_fc2`` saves the reshaped copy it multiplies). The decoder layers run
    once."""
    steps = record["steps"]
    select, none = runs["select"], runs["none"]
    assert select["calls"] == none["calls"]
    for layer in range(2):
        expected = dict.fromkeys(IN_LAYER, steps)
        expected["mlp.activation_func.silu"] = 2 * steps
        assert _layer_runs(select, layer) == expected


def test_comm_recompute_marks_run_nothing_again(runs):
    """``select_comm_recompute`` marks the norms' ``RmsNorm`` with ``recompute_comm_op``, which
    recomputes communication operators only: on one device there are none, so every primitive
    runs as often as without marks."""
    assert runs["comm"]["runs"] == runs["none"]["runs"]
    assert runs["comm"]["calls"] == runs["none"]["calls"]


# The seven ``Reshape`` primitives mindformers marks ``recompute(True)`` whenever it builds the
# model, whatever the config: calls in one forward, and how many of them rerun in backward (a
# marked primitive's output is recomputed when something in backward reads it).
# - the ColumnParallelLinear of ``linear_qkv``, ``linear_fc1`` and the output layer: 2 calls (the
#   input to 2-D before the MatMul, the result back to 3-D); the MatMul saves its 2-D input for
#   the weight's gradient, so that call reruns once; nothing in backward reads the 3-D result.
# - the interleaved MLP's own ``reshape`` (the SiLU path): 3 calls (the gate-up output to
#   ``(..., n, 2)`` for the split, whose backward reads nothing; ``x0``, which the SiLU saves;
#   ``x1``, which the gated ``Mul`` saves for the SiLU side's gradient): 2 rerun.
# In ``full`` and ``all`` the decoder layers rerun whole in backward, so their reshapes run twice
# the calls; that rerun is itself a forward with the marks on, and its backward reruns the same
# outputs once more (one rerun beyond the layer's own: a reshape of one activation, no change to
# the numbers). The output layer sits outside the decoder layers. ``select`` and ``comm`` mark
# other primitives only: as ``none``.
RESHAPES = {"self_attention.linear_qkv.reshape": (2, 1), "mlp.linear_fc1.reshape": (2, 1),
            "mlp.reshape": (3, 2)}  # in each decoder layer: (calls in a forward, reruns)
OUTPUT_RESHAPE = "model.output_layer.reshape"


def test_the_always_marked_reshapes_rerun_where_backward_reads_them(runs, record):
    steps = record["steps"]
    marked = {m[0] for m in _marks(record["recompute_marks"]["none"]["marks"]) if m[1] == "Reshape"}
    assert marked == {LAYER.format(i) + n for i in (0, 1) for n in RESHAPES} | {OUTPUT_RESHAPE}
    for variant in VARIANTS:
        layer_runs = 2 if variant in ("full", "all") else 1
        expected = {LAYER.format(i) + name: steps * (calls * layer_runs + reruns)
                    for i in (0, 1) for name, (calls, reruns) in RESHAPES.items()}
        expected[OUTPUT_RESHAPE] = steps * (2 + 1)
        assert {name: runs[variant]["runs"][name] for name in marked} == expected, variant
    # the RowParallelLinear reshapes (unmarked) run their two calls a forward and no more
    for i in (0, 1):
        assert runs["none"]["runs"][LAYER.format(i) + "self_attention.linear_proj.reshape"] == steps * 2
        assert runs["none"]["runs"][LAYER.format(i) + "mlp.linear_fc2.reshape"] == steps * 2
