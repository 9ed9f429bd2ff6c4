"""Run one of compat/mindformers_scripts' training scripts under the runner, as the mindformers
tests do: through a driver that counts what ran, from MindSpore's recorded initial weights, 4
steps, with its losses (``--out``) and its gradient dump (``--grads``) read back."""

from __future__ import annotations

import json
import subprocess
import sys

from _mindformers_grads import load
from _ms_helpers import checkout_env


def run_script(tmp_path, driver, script, recorded, *args: str) -> dict:
    """The script's ``--out`` JSON, the driver's counts, and ``"dump"``: its ``--grads`` entries.
    ``args`` are the script's own (e.g. ``--recompute full``)."""
    out, counts, grads = tmp_path / "out.json", tmp_path / "counts.json", tmp_path / "grads.npz"
    command = [sys.executable, "-m", "paddle_mindspore", str(driver), str(counts), str(script),
               "--steps", "4", "--init", str(recorded / "init.npz"), "--out", str(out),
               "--grads", str(grads), *args]
    done = subprocess.run(command, cwd=tmp_path, env=checkout_env(), capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    return {**json.loads(out.read_text()), **json.loads(counts.read_text()), "dump": load(grads)}
