"""Record real MindSpore 2.10 running compat/mindformers_scripts/llama_train.py (mindformers
2.1.0's Llama, unmodified) on the CPU, for compat/tests/test_ms_mindformers_llama.py.

    /work/msvenv/bin/python compat/record/record_mindformers_llama.py compat/tests/recorded/mindformers_llama

Writes ``init.npz`` (the network's initial weights by parameter name, as MindSpore drew them),
``grads.npz`` (the script's ``--grads`` dump of the recompute-on run: the first step's gradient of
every trained parameter, ``grad/<name>``, and every parameter after the last step,
``param/<name>``; compressed) and ``run.json``: the parameter names and shapes, four steps' losses
from ``init.npz`` with recompute on, the same with recompute off and with only the selective marks
on, the largest difference of those two runs' dumps from the recompute-on one
(``grads_change_no_recompute``, ``grads_change_select_only``), and the noise floor: the largest
difference from the recompute-on losses over four runs with every weight scaled by
``1 + 1e-6 * N(0, 1)`` (noise seeds 1-4) and one run with each batch's rows reversed (the same
arithmetic summed in another order); ``grads_floor``, the same per entry of the dump
(compat/record/mindformers_grads.py). Each run is a subprocess, as a user runs the script.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mindformers_grads as mg  # noqa: E402

SCRIPT = Path(__file__).resolve().parents[1] / "mindformers_scripts" / "llama_train.py"
STEPS = 4
NOISE_SEEDS = (1, 2, 3, 4)


def run(tmp: Path, *args: str) -> dict:
    out = tmp / "out.json"
    command = [sys.executable, str(SCRIPT), "--steps", str(STEPS), "--out", str(out), *args]
    subprocess.run(command, check=True, cwd=tmp, capture_output=True, text=True)
    return json.loads(out.read_text())


def main(argv):
    dest = Path(argv[0] if argv else "compat/tests/recorded/mindformers_llama").resolve()
    dest.mkdir(parents=True, exist_ok=True)
    init = dest / "init.npz"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        drawn = run(tmp, "--save-init", str(init))
        base = run(tmp, "--init", str(init), "--grads", str(tmp / "base.npz"))
        plain = run(tmp, "--init", str(init), "--no-recompute", "--grads", str(tmp / "plain.npz"))
        select = run(tmp, "--init", str(init), "--select-only", "--grads", str(tmp / "select.npz"))
        noisy, dumps = mg.noise_runs(run, tmp, init, NOISE_SEEDS)
        dump = mg.load(tmp / "base.npz")
        grads_floor = mg.floor(dump, mg.initial_weights(init), dumps)
        change = {kind: mg.largest_difference(mg.load(tmp / f"{kind}.npz"), dump)
                  for kind in ("plain", "select")}
        np.savez_compressed(dest / "grads.npz", **dump)
    import mindspore

    losses = np.array(base["losses"])
    floor = np.max([np.abs(np.array(n) - losses) for n in noisy], axis=0)
    record = {
        "mindspore": mindspore.__version__,
        "steps": STEPS,
        "noise_seeds": list(NOISE_SEEDS), "reversed_batch_in_floor": True,
        "params": base["params"],
        "drawn_losses": drawn["losses"],
        "losses": base["losses"],
        "losses_no_recompute": plain["losses"], "losses_select_only": select["losses"],
        "floor": floor.tolist(),
        "grads_change_no_recompute": change["plain"], "grads_change_select_only": change["select"],
        "grads_floor": grads_floor,
    }
    (dest / "run.json").write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
