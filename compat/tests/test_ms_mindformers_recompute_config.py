"""Every key of mindformers' ``TransformerRecomputeConfig`` on its 2-layer Llama
(compat/mindformers_scripts/llama_train.py, ``--recompute-config``), unmodified, under
``python -m paddle_mindspore``, against what real MindSpore 2.10 records for the same keys
(recorded/mindformers_llama/recompute_config.json,
``compat/record/record_mindformers_recompute_config.py``).

Per variant: mindformers marks the same cells and primitives, with the same arguments, as under
MindSpore; what is marked reruns in backward (forward calls counted); the losses are the
layer's own losses without recompute, bit for bit, and so are the first step's gradient of
every parameter and every parameter after the last step (the script's ``--grads`` dump); the
bytes the step holds when the forward returns drop where a mark applies. Keys that act only
across devices are said once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from _mindformers_grads import assert_dumps_equal, load
from _ms_helpers import COMPAT, checkout_env

RECORDED = COMPAT / "tests" / "recorded" / "mindformers_llama"
SCRIPT = COMPAT / "mindformers_scripts" / "llama_train.py"
DRIVER = COMPAT / "tests" / "_mindformers_llama_driver.py"
RECORD = json.loads((RECORDED / "recompute_config.json").read_text())
VARIANTS = tuple(RECORD["variants"])
ONE_DEVICE = "has no effect on one device"


def _run(tmp_path, keys: dict) -> dict:
    out = tmp_path / "out.json"
    counts = tmp_path / "counts.json"
    grads = tmp_path / "grads.npz"
    command = [sys.executable, "-m", "paddle_mindspore", str(DRIVER), str(counts), str(SCRIPT),
               "--steps", str(RECORD["steps"]), "--init", str(RECORDED / "init.npz"),
               "--out", str(out), "--grads", str(grads), "--recompute-config", json.dumps(keys)]
    env = dict(checkout_env(), FLAGS_enable_host_memory_stat="1")
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    return {**json.loads(out.read_text()), **json.loads(counts.read_text()), "stderr": done.stderr,
            "dump": load(grads)}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    return {v: _run(tmp_path_factory.mktemp(v), RECORD["variants"][v]["keys"]) for v in VARIANTS}


def _marks(marks: list) -> list:
    return sorted((m["name"], m["class"], m["method"], json.dumps(m["args"]), json.dumps(m["kwargs"]))
                  for m in marks)


@pytest.mark.parametrize("variant", VARIANTS)
def test_marks_are_mindspores(runs, variant):
    recorded = RECORD["variants"][variant]["marks"]
    assert "<unreachable>" not in {m["name"] for m in recorded}
    assert _marks(runs[variant]["marks"]) == _marks(recorded)


@pytest.mark.parametrize("variant", VARIANTS)
def test_losses_bit_identical_to_no_recompute(runs, variant):
    np.testing.assert_array_equal(runs[variant]["losses"], runs["none"]["losses"])
    # MindSpore's own losses do not move with any key either.
    np.testing.assert_array_equal(RECORD["variants"][variant]["losses"],
                                  RECORD["variants"]["none"]["losses"])


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v != "none"])
def test_gradients_and_weights_bit_identical_to_no_recompute(runs, variant):
    assert_dumps_equal(runs[variant]["dump"], runs["none"]["dump"], variant)
    # MindSpore's own gradients and final parameters do not move with any key either.
    assert RECORD["variants"][variant]["grads_change"] == 0.0


# Per variant: decoder-layer forwards and extra ``Mul`` runs a step, over no recompute.
# recompute=True reruns both layers (a decoder layer's forward runs ``Mul`` 10 times); [1] (one
# pipeline stage: the first layer of it) one layer.
# select_recompute marks attention's primitives, its rotary cell and the feed-forward ``mul``
# and SiLU. Counted per primitive instance, a step reruns per layer the rotary cell (2 ``Mul`` a
# call, for q and k: 4) and attention's ``mul`` (1); the feed-forward ``mul`` and the SiLU run
# once. The pattern naming only the feed-forward ``mul`` still gets the attention marks
# (LLamaAttention sets them for any select_recompute): the same 5. Excluding the feed-forward
# ``mul`` turns its mark off (``recompute(False)``, test_marks_are_mindspores), which changes no
# count since it did not rerun. select_comm_recompute matches nothing in Llama (its default
# pattern names ``.norm`` cells' communication); the three keys for several devices change no mark.
RERUNS = {
    "none": (0, 0), "recompute": (2, 2 * 10), "recompute_list": (1, 10),
    "select_recompute": (0, 10), "select_pattern": (0, 10), "select_exclude": (0, 10),
    "select_comm_recompute": (0, 0), "mp_comm_recompute_off": (2, 2 * 10),
    "parallel_optimizer_comm_recompute": (2, 2 * 10), "recompute_slice_activation": (2, 2 * 10),
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_marks_rerun_what_they_mark(runs, variant):
    steps, layers = RECORD["steps"], 2
    run, none = runs[variant], runs["none"]
    assert run["layers"] == none["layers"] == layers
    assert none["calls"] == none["silu"] == steps * layers
    extra_layers, extra_mul = RERUNS[variant]
    assert run["calls"] - none["calls"] == steps * extra_layers
    assert run["mul"] - none["mul"] == steps * extra_mul, (variant, run["mul"], none["mul"])


SELECT_RERUNS = {"attention.apply_rotary_emb.mul": 4, "attention.mul": 1}  # a layer, a step


@pytest.mark.parametrize("variant", ("select_recompute", "select_pattern", "select_exclude"))
def test_selective_marks_rerun_these_primitives(runs, variant):
    """Counted per ``Mul`` instance: the rotary cell's and attention's marked ``mul`` rerun; the
    feed-forward ``mul`` runs once whether marked (``select_recompute``), named by pattern, or
    excluded."""
    steps, run, none = RECORD["steps"], runs[variant]["mul_by_name"], runs["none"]["mul_by_name"]
    assert set(run) == set(none) and "<unreachable>" not in run
    for name, count in run.items():
        part = name.split(".", 3)[-1] if name.startswith("model.layers.") else name
        assert count - none[name] == steps * SELECT_RERUNS.get(part, 0), name


@pytest.mark.parametrize("variant", VARIANTS)
def test_held_bytes_drop_where_a_mark_applies(runs, variant):
    held, none = runs[variant]["held_bytes"], runs["none"]["held_bytes"]
    assert len(set(held)) == 1 and len(held) == RECORD["steps"]  # every step holds the same
    if RERUNS[variant] == (0, 0):
        assert held == none
    else:
        assert held[0] < none[0], (held, none)
    if variant == "recompute_list":
        assert runs["recompute"]["held_bytes"][0] < held[0]


@pytest.mark.parametrize("variant", ("select_recompute", "select_pattern", "select_exclude"))
def test_selective_marks_do_not_raise_the_step_peak(runs, variant):
    """Primitive marks turn the layer's saved-tensor frame on; what it keeps rather than
    recomputes is freed once its node's backward has run, as without the frame, so a step
    peaks where the same step without recompute does (1.6x higher when the frame kept every
    activation to the end of backward)."""
    peaks, none = runs[variant]["step_peak_bytes"], runs["none"]["step_peak_bytes"]
    assert len(peaks) == len(none) == RECORD["steps"]
    # 1% margin: measured 128 bytes above the plain step (705,800 against 705,672), a few
    # small allocations of the reruns not yet pinned down; the defect this guards was +63%.
    assert all(p <= n * 1.01 for p, n in zip(peaks, none, strict=True)), (peaks, none)


@pytest.mark.parametrize("variant", VARIANTS)
def test_keys_for_several_devices_are_said_once(runs, variant):
    """``recompute_slice_activation=True`` reaches ``Cell.recompute`` on both layers; the layer
    says once that one device has nothing to slice. mindformers does not pass
    ``mp_comm_recompute`` or ``parallel_optimizer_comm_recompute`` to any cell of Llama (its
    ``LayerSetting`` forwards only the slice flag), so they reach neither MindSpore nor the layer,
    and nothing is said."""
    said = [line for line in runs[variant]["stderr"].splitlines() if ONE_DEVICE in line]
    if variant == "recompute_slice_activation":
        assert len(said) == 1 and "'recompute_slice_activation'" in said[0], said
    else:
        assert said == []


def test_every_key_is_covered():
    keys = set()
    for variant in RECORD["variants"].values():
        keys |= set(variant["keys"])
    assert keys == {"recompute", "select_recompute", "select_recompute_exclude",
                    "select_comm_recompute", "mp_comm_recompute",
                    "parallel_optimizer_comm_recompute", "recompute_slice_activation"}
    assert isinstance(RECORD["variants"]["recompute_list"]["keys"]["recompute"], list)
    assert os.path.exists(RECORDED / "init.npz")
