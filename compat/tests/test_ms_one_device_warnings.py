"""Recompute options that act only across devices say so once per process, naming the option and
why one device leaves it nothing to do; options that act on one device say nothing.

mindformers' ``TransformerRecomputeConfig`` keys reach the layer as MindSpore receives them:
``recompute_slice_activation`` as ``Cell.recompute(recompute_slice_activation=...)`` on each
decoder layer (its legacy Llama; its training-graph Qwen3 refuses the key), and
``select_comm_recompute`` as ``add_prim_attr("recompute_comm_op", True)`` on the norms'
primitives (Qwen3; Llama's pattern matches none). ``mp_comm_recompute`` and
``parallel_optimizer_comm_recompute`` are passed to no cell by mindformers, so they reach only a
user's own ``Cell.recompute(...)``. Each scenario runs in a fresh process
(``_one_device_warnings_driver.py`` under ``python -m paddle_mindspore``), which builds a model
several times and marks each build on stderr: the once-per-process state starts empty whatever
ran before, and the test reads which build said what.
"""

from __future__ import annotations

import json
import subprocess
import sys

from _ms_helpers import COMPAT, checkout_env

DRIVER = COMPAT / "tests" / "_one_device_warnings_driver.py"
ONE_DEVICE = "has no effect on one device"
# what each warning must say about why the option cannot act here
WHY = {
    "mp_comm_recompute": "one device has no model-parallel communication",
    "parallel_optimizer_comm_recompute": "one device has no optimizer shard",
    "recompute_slice_activation": "one device is a single rank, so nothing is sliced",
    "recompute_comm_op": ("select_comm_recompute marks its norms) are recomputed; "
                          "one device has no communication"),
}
CROSS_DEVICE = {"mp_comm_recompute": True, "parallel_optimizer_comm_recompute": True}


def _said(tmp_path, builds: list[dict]) -> list[list[str]]:
    """The one-device warnings of a fresh process, per build (in build order)."""
    command = [sys.executable, "-m", "paddle_mindspore", str(DRIVER), json.dumps(builds)]
    done = subprocess.run(command, cwd=tmp_path, env=checkout_env(), capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    said: list[list[str]] = []
    for line in done.stderr.splitlines():
        if line.startswith("=== build "):
            assert line == f"=== build {len(said)}"
            said.append([])
        elif ONE_DEVICE in line:
            assert said, line  # nothing is said before the first build
            said[-1].append(line)
    assert len(said) == len(builds)
    return said


def _check(said: list[list[str]], expected: dict[int, list[str]]) -> None:
    """Build ``i`` said exactly one warning for each key of ``expected[i]`` and nothing else."""
    for i, lines in enumerate(said):
        keys = expected.get(i, [])
        assert len(lines) == len(keys), (i, lines)
        for key, line in zip(keys, lines, strict=True):
            assert f"recompute: '{key}' {ONE_DEVICE} (" in line, line
            assert WHY[key] in line, line


def test_cell_and_primitive_options_warn_once_per_process(tmp_path):
    """``Cell.recompute`` with the cross-device keywords on three two-block models (each block
    marked), and ``recompute_comm_op`` on two models' primitives: each option's warning comes
    with its first use only. ``recompute()`` alone, the cross-device keywords set to False (what
    they ask is nothing) and a ``recompute`` primitive mark say nothing."""
    cross = {**CROSS_DEVICE, "recompute_slice_activation": True}
    builds = [
        {"kind": "cell", "keys": {}},
        {"kind": "cell", "keys": {"parallel_optimizer_comm_recompute": False,
                                  "recompute_slice_activation": False}},
        {"kind": "prim", "keys": {"recompute": True, "recompute_comm_op": False}},
        {"kind": "cell", "keys": {"mp_comm_recompute": True}},
        {"kind": "cell", "keys": cross},
        {"kind": "cell", "keys": cross},
        {"kind": "prim", "keys": {"recompute_comm_op": True}},
        {"kind": "prim", "keys": {"recompute_comm_op": True}},
        {"kind": "cell", "keys": {}},
    ]
    _check(_said(tmp_path, builds), {3: ["mp_comm_recompute"],
                                     4: ["parallel_optimizer_comm_recompute", "recompute_slice_activation"],
                                     6: ["recompute_comm_op"]})


def test_mindformers_llama_warns_once_for_recompute_slice_activation(tmp_path):
    """Three Llamas with ``recompute_slice_activation`` (two decoder layers each): one warning.
    ``recompute``, ``select_recompute`` (which act), ``select_comm_recompute`` (matches nothing
    in Llama) and the two keys mindformers passes to no cell say nothing."""
    builds = [
        {"kind": "llama", "keys": {"recompute": True}},
        {"kind": "llama", "keys": {"select_recompute": True}},
        {"kind": "llama", "keys": {"recompute": True, "recompute_slice_activation": True}},
        {"kind": "llama", "keys": {"recompute": True, "recompute_slice_activation": True}},
        {"kind": "llama", "keys": {"select_recompute": True, "recompute_slice_activation": True}},
        {"kind": "llama", "keys": {"select_comm_recompute": True}},
        {"kind": "llama", "keys": {"recompute": True, **CROSS_DEVICE}},
    ]
    # build 4: without full recompute mindformers calls no Cell.recompute, so no slice flag
    _check(_said(tmp_path, builds), {2: ["recompute_slice_activation"]})


def test_mindformers_qwen3_warns_once_for_select_comm_recompute(tmp_path):
    """Three training-graph Qwen3s with ``select_comm_recompute`` (four ``RmsNorm`` primitives
    marked ``recompute_comm_op`` each): one warning, which names the key. ``recompute`` and
    ``select_recompute`` (which act) and the two keys mindformers passes to no cell say
    nothing."""
    builds = [
        {"kind": "qwen3", "keys": {"recompute": True}},
        {"kind": "qwen3", "keys": {"select_recompute": True}},
        {"kind": "qwen3", "keys": {"select_comm_recompute": True}},
        {"kind": "qwen3", "keys": {"select_comm_recompute": True}},
        {"kind": "qwen3", "keys": {"select_recompute": True, "select_comm_recompute": True}},
        {"kind": "qwen3", "keys": {"recompute": True, **CROSS_DEVICE}},
    ]
    _check(_said(tmp_path, builds), {2: ["recompute_comm_op"]})
