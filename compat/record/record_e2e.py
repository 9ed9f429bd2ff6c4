"""Record real MindSpore 2.10 running the two end-to-end programs, and its own noise floor.

    /work/msvenv/bin/python compat/record/record_e2e.py compat/tests/recorded/e2e

For ``compat/g_tutorial_mnist.py`` (value_and_grad loop) and ``compat/h_model_train.py``
(``Model.train`` with callbacks and metrics): the initial weights (``<g|h>_init.ckpt``, MindSpore's
initialisers after ``set_seed(1)``), the run's JSON line and printed lines, its final checkpoint,
and the same run five times with every initial weight scaled by ``1 + 1e-6 * N(0, 1)`` (noise
seeds 0-4): the largest difference from the plain run is MindSpore's noise floor
(``reference.json``: ``floor``, ``floor_ckpt``).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import mindspore
import numpy as np

COMPAT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(COMPAT))
import g_tutorial_mnist  # noqa: E402
import h_model_train  # noqa: E402

PROGRAMS = {"g": ("g_tutorial_mnist.py", g_tutorial_mnist.Network, "model.ckpt"),
            "h": ("h_model_train.py", h_model_train.LeNet, "lenet-2_6.ckpt")}


def run(script, data, init, out, *extra):
    done = subprocess.run([sys.executable, str(COMPAT / script), "--data", str(data), "--init", str(init),
                           "--out", str(out), *extra], capture_output=True, text=True, check=True)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return json.loads(lines[-1]), lines[:-1]


def floor(a, b):
    """Largest absolute difference per key between two runs (numbers, lists, checkpoints)."""
    return float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))


def main(argv):
    out = Path(argv[0] if argv else "compat/tests/recorded/e2e")
    out.mkdir(parents=True, exist_ok=True)
    data = COMPAT / "tests" / "recorded" / "datasets" / "mnist"
    record = {"mindspore": mindspore.__version__}
    for key, (script, network, final) in PROGRAMS.items():
        mindspore.set_seed(1)
        init = out / f"{key}_init.ckpt"
        mindspore.save_checkpoint(network(), str(init))
        with tempfile.TemporaryDirectory() as tmp:
            base, lines = run(script, data, init, Path(tmp) / "a")
            noise = ("--noise", "1e-6", "--noise-seed")
            noisy = [run(script, data, init, Path(tmp) / f"b{s}", *noise, f"{s}")[0] for s in range(5)]
            shutil.copy(Path(tmp) / "a" / final, out / f"{key}_final.ckpt")
            ckpt_a = mindspore.load_checkpoint(str(Path(tmp) / "a" / final))
            ckpt_b = [mindspore.load_checkpoint(str(Path(tmp) / f"b{s}" / final)) for s in range(5)]
            extra = {}
            if key == "h":
                extra["sink"], _ = run(script, data, init, Path(tmp) / "c", "--sink")
        numeric = [k for k in ("losses", "test_loss", "logits", "predict", "steps") if k in base]
        record[key] = {"run": base, "lines": lines, **extra,
                       "floor": {k: max(floor(base[k], n[k]) for n in noisy) for k in numeric},
                       "floor_ckpt": {k: max(floor(ckpt_a[k].asnumpy(), b[k].asnumpy()) for b in ckpt_b)
                                      for k in ckpt_a}}
        if key == "h":
            losses = [n["eval"]["loss"] for n in noisy]
            record[key]["floor"]["eval_loss"] = max(abs(base["eval"]["loss"] - loss) for loss in losses)
    (out / "reference.json").write_text(json.dumps(record, indent=0, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
