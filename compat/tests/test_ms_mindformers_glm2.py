"""mindformers 2.1.0's GLM2 (``ChatGLM2ForConditionalGeneration``), unmodified, trained under
``python -m paddle_mindspore`` against real MindSpore 2.10 running the same script
(recorded/mindformers_glm2/, ``compat/record/record_mindformers_glm2.py``).

The script (compat/mindformers_scripts/glm2_train.py): a 2-layer GLM2 (hidden 32, 4 heads of 8
with 2 key/value groups, MLP 64, vocab 128, sequence 16, float32) trained 4 steps with
``mindspore.value_and_grad`` and ``nn.SGD`` from MindSpore's initial weights (loaded by
parameter name), under three ``TransformerRecomputeConfig`` variants: none, ``recompute=True``
(``full``: each ``ChatGLM2Block`` marked) and ``select_recompute`` naming GLM2's SiLU and
attention-softmax cells (``pattern``). The inference-attention cell GLM2 builds for training too
(its paged key/value caches are parameters) constructs; its kernels are never called. Each run is
a subprocess, as a user runs it. Compared: the losses, the first step's gradient of every
trained parameter and every parameter after the last step (the script's ``--grads`` dump;
recorded/mindformers_glm2/grads.npz is MindSpore's, recorded with recompute all on).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from _mindformers_grads import assert_dumps_equal, assert_within_floor, load
from _mindformers_run import run_script
from _ms_helpers import COMPAT

RECORDED = COMPAT / "tests" / "recorded" / "mindformers_glm2"
SCRIPT = COMPAT / "mindformers_scripts" / "glm2_train.py"
DRIVER = COMPAT / "tests" / "_mindformers_glm2_driver.py"
VARIANTS = ("none", "full", "pattern")
# How far the layer may sit from MindSpore, in units of MindSpore's own floor: the largest
# change in any step's loss that MindSpore itself shows when run again with 1e-6 relative noise
# on its initial weights (4 seeds) or with each batch's rows reversed: one float32 ulp of the
# loss (4.8e-7 at a loss of 4.86; steps 0, 1 and 3 moved by none). Paddle's float32 kernels round
# in another order than MindSpore's CPU kernels (as with Llama, test_ms_mindformers_llama.py:
# MatMul, ReduceSum, ReduceMean and Softmax differ by 1-8 ulps of their outputs), which moves the
# loss by a few ulps: measured 1, 3, 4, 3 ulps over the four steps. 8x leaves room for a CPU
# whose BLAS blocks its sums differently.
FLOORS = 8
# The same for each gradient and final weight, per parameter: its floor is the largest change of
# the entry (absolute, over its elements) in those noisy and reversed MindSpore runs; for a final
# weight, the change of what training moved it (final - initial), so the injected noise is not
# counted (compat/record/mindformers_grads.py). The paged key/value caches are not trained: their
# floor is 0, and they must match exactly. Measured: gradients at most 0.61x their floor (32
# float32 ulps of the entry's largest element), final weights at most 0.67x (15 ulps). 4x leaves
# room for a CPU whose BLAS blocks its sums differently.
GRAD_FLOORS = 4


def _run(tmp_path, variant: str) -> dict:
    return run_script(tmp_path, DRIVER, SCRIPT, RECORDED, "--recompute", variant)


@pytest.fixture(scope="module")
def record() -> dict:
    return json.loads((RECORDED / "run.json").read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    return {variant: _run(tmp_path_factory.mktemp(variant), variant) for variant in VARIANTS}


def test_parameter_names_and_shapes_are_mindspores(runs, record):
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
    for variant in record["losses"]:
        np.testing.assert_array_equal(record["losses"][variant], record["losses"]["none"])


@pytest.mark.parametrize("variant", VARIANTS)
def test_gradients_and_weights_within_mindspores_noise_floor(runs, record, variant):
    floors = record["grads_floor"]
    caches = {key for key in floors if key.endswith(("key_cache", "value_cache"))}
    assert len(caches) == 4 and all(floors[key] == 0 for key in caches)
    assert all(0 < floors[key] < 1e-5 for key in set(floors) - caches), floors
    assert_within_floor(runs[variant]["dump"], load(RECORDED / "grads.npz"), floors, GRAD_FLOORS)
    # MindSpore's own gradients and weights are the same for every variant.
    assert record["grads_change"] == dict.fromkeys(record["losses"], 0.0)


@pytest.mark.parametrize("variant", ("full", "pattern"))
def test_recompute_gradients_and_weights_bit_identical(runs, variant):
    assert_dumps_equal(runs[variant]["dump"], runs["none"]["dump"], variant)


def _marked_classes(record: dict, variant: str) -> dict:
    marked: dict = {}
    for mark in record["recompute_marks"][variant]["marks"]:
        assert (mark["kind"], mark["method"]) == ("cell", "recompute")
        marked[mark["class"]] = marked.get(mark["class"], 0) + 1
    return marked


def test_recompute_marks_are_mindspores(runs, record):
    """mindformers marks the same cells as under MindSpore: each ``ChatGLM2Block`` for
    ``recompute=True``; each layer's ``ChatGLM2SiLU`` and attention ``Softmax`` for the
    pattern (found through ``dir(cell)`` and ``cell._cells`` as in MindSpore)."""
    for variant in VARIANTS:
        assert runs[variant]["marked"] == _marked_classes(record, variant), variant
    assert _marked_classes(record, "full") == {"ChatGLM2Block": 2}
    assert _marked_classes(record, "pattern") == {"ChatGLM2SiLU": 2, "Softmax": 2}


def test_recompute_marks_rerun_what_they_mark(runs, record):
    """Marked cells run their forward again in backward: with ``recompute=True`` each
    decoder block (and the SiLU and softmax inside it) twice a step, with the pattern only the
    SiLU and softmax cells; unmarked, once. The losses are the same bit for bit (recompute
    changes where activations come from, not the arithmetic)."""
    steps, layers = record["steps"], runs["none"]["layers"]
    none, full, pattern = runs["none"], runs["full"], runs["pattern"]
    assert layers == full["layers"] == pattern["layers"] == 2
    once = steps * layers
    assert none["calls"] == none["silu"] == none["softmax"] == once
    assert full["calls"] == full["silu"] == full["softmax"] == 2 * once
    assert pattern["calls"] == once
    assert pattern["silu"] == pattern["softmax"] == 2 * once
    np.testing.assert_array_equal(full["losses"], none["losses"])
    np.testing.assert_array_equal(pattern["losses"], none["losses"])
