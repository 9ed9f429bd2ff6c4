"""Record real MindSpore 2.10 running compat/mindformers_scripts/glm2_train.py (mindformers
2.1.0's GLM2, unmodified) on the CPU in PyNative mode.

    /work/msvenv/bin/python compat/record/record_mindformers_glm2.py compat/tests/recorded/mindformers_glm2

Writes ``init.npz`` (the network's initial weights by parameter name, as MindSpore drew them)
and ``run.json``: the parameter names and shapes; four steps' losses from ``init.npz`` for each
recompute variant of the script (``none``, ``full``, ``select``, ``comm``, ``all``,
``pattern``); the noise
floor: the largest difference from the ``all`` losses over four runs with every weight scaled
by ``1 + 1e-6 * N(0, 1)`` (noise seeds 1-4) and one run with each batch's rows reversed; and,
per variant, the cells and primitives mindformers marks for recompute while it builds the
network (compat/record/mindformers_recompute_marks.py). Each training run is a subprocess, as a
user runs the script.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SCRIPT = HERE.parent / "mindformers_scripts" / "glm2_train.py"
STEPS = 4
NOISE_SEEDS = (1, 2, 3, 4)
VARIANTS = ("none", "full", "select", "comm", "all", "pattern")


def run(tmp: Path, *args: str) -> dict:
    out = tmp / "out.json"
    command = [sys.executable, str(SCRIPT), "--steps", str(STEPS), "--out", str(out), *args]
    subprocess.run(command, check=True, cwd=tmp, capture_output=True, text=True)
    return json.loads(out.read_text())


def recompute_marks() -> dict:
    import mindspore

    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(SCRIPT.parent))
    import glm2_train
    from mindformers_recompute_marks import marks

    mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    result = {}
    for variant in VARIANTS:
        found = marks(glm2_train.build, variant)
        result[variant] = {"counts": found["counts"], "marks": found["marks"]}
    return result


def main(argv):
    dest = Path(argv[0] if argv else "compat/tests/recorded/mindformers_glm2").resolve()
    dest.mkdir(parents=True, exist_ok=True)
    init = dest / "init.npz"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        drawn = run(tmp, "--save-init", str(init))
        by_variant = {v: run(tmp, "--init", str(init), "--recompute", v) for v in VARIANTS}
        noisy = [run(tmp, "--init", str(init), "--noise", str(s))["losses"] for s in NOISE_SEEDS]
        noisy.append(run(tmp, "--init", str(init), "--reverse-batch")["losses"])
        cwd = os.getcwd()
        os.chdir(tmp)  # mindformers writes its log folder (output/) into the working directory
        try:
            marks = recompute_marks()
        finally:
            os.chdir(cwd)
    import mindspore

    losses = np.array(by_variant["all"]["losses"])
    floor = np.max([np.abs(np.array(n) - losses) for n in noisy], axis=0)
    record = {
        "mindspore": mindspore.__version__,
        "steps": STEPS,
        "noise_seeds": list(NOISE_SEEDS), "reversed_batch_in_floor": True,
        "params": by_variant["all"]["params"],
        "drawn_losses": drawn["losses"],
        "losses": {v: r["losses"] for v, r in by_variant.items()},
        "floor": floor.tolist(),
        "recompute_marks": marks,
    }
    (dest / "run.json").write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
