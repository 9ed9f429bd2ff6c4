"""Record what real MindSpore 2.10's CPU build gives for compat/mindformers_scripts/qwen3_train.py
(mindformers 2.1.0's Qwen3 on its training-graph path, ``TrainingQwen3ForCausalLM``, unmodified).

    /work/msvenv/bin/python compat/record/record_mindformers_qwen3.py compat/tests/recorded/mindformers_qwen3

MindSpore builds the network but cannot train it on the CPU (see the script's docstring), so
there are no losses to record. Writes ``init.npz`` (the network's initial weights by parameter
name, as MindSpore drew them) and ``run.json``: the parameter names and shapes; ``step_error``,
the error line MindSpore stops the first training step with, per recompute variant; and, per
variant, the cells and primitives mindformers marks for recompute while it builds the network
(compat/record/mindformers_recompute_marks.py). Each training run is a subprocess, as a user
runs the script.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPT = HERE.parent / "mindformers_scripts" / "qwen3_train.py"
VARIANTS = ("none", "full", "select", "comm", "all")


def run(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, str(SCRIPT), "--out", str(tmp / "out.json"), *args]
    return subprocess.run(command, check=False, cwd=tmp, capture_output=True, text=True)


def step_error(tmp: Path, init: Path, variant: str) -> str:
    done = run(tmp, "--steps", "1", "--init", str(init), "--recompute", variant)
    if done.returncode == 0:
        raise RuntimeError(f"qwen3_train.py --recompute {variant} trained a step; record its losses instead")
    found = re.findall(r"^(Unsupported op \[\w+\].*|RuntimeError: \S.*)$", done.stderr, re.M)
    return found[0] if found else done.stderr.strip().splitlines()[-1]


def recompute_marks() -> dict:
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(SCRIPT.parent))
    import qwen3_train
    from mindformers import build_context
    from mindformers_recompute_marks import marks

    build_context({"use_legacy": False, "parallel": {},
                   "context": {"mode": "GRAPH_MODE", "device_target": "CPU"}})
    result = {}
    for variant in VARIANTS:
        found = marks(qwen3_train.build, variant)
        result[variant] = {"counts": found["counts"], "marks": found["marks"]}
    return result


def main(argv):
    dest = Path(argv[0] if argv else "compat/tests/recorded/mindformers_qwen3").resolve()
    dest.mkdir(parents=True, exist_ok=True)
    init = dest / "init.npz"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        drawn = run(tmp, "--steps", "0", "--save-init", str(init))
        drawn.check_returncode()
        params = json.loads((tmp / "out.json").read_text())["params"]
        errors = {v: step_error(tmp, init, v) for v in VARIANTS}
        cwd = os.getcwd()
        os.chdir(tmp)  # mindformers writes its log folder (output/) into the working directory
        try:
            marks = recompute_marks()
        finally:
            os.chdir(cwd)
    import mindspore

    record = {
        "mindspore": mindspore.__version__,
        "params": params,
        "losses": None,
        "step_error": errors,
        "recompute_marks": marks,
    }
    (dest / "run.json").write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
