"""Record mindcv's own train.py and validate.py under real MindSpore 2.10, with its noise floor.

    python compat/record/record_mindcv_script.py compat/tests/recorded/mindcv_script

Runs in the project's environment and drives MindSpore's (``MS_PYTHON``, default
/work/msvenv/bin/python, under ``nice -n 19``). Writes ``init-0_0.ckpt`` (MindSpore's initial
shufflenet_v2_x0_5; train.py resumes from it, so both sides start from MindSpore's weights)
and ``reference.json``: for the plain and the ``--ema`` recipe, what
``mindcv_script_run.read_train`` reads back and validate.py's result on the last checkpoint,
plus the floor: the largest change that ``NOISE_RUNS`` runs from the initial weights times
``1 + 1e-6 * N(0, 1)`` make to each number.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_dataset_files  # noqa: E402
import mindcv_script_run as mr  # noqa: E402

MS = ["nice", "-n", "19", os.environ.get("MS_PYTHON", "/work/msvenv/bin/python")]
NOISE_RUNS = 3


def _one(tmp: Path, data: Path, init: Path, kind: str, tag: str) -> dict:
    out = tmp / f"{kind}_{tag}"
    mr.run([*MS, *mr.train_args(data, init, out.name, kind)], cwd=tmp)
    result = mr.read_train(out)
    stdout = mr.run([*MS, *mr.validate_args(data, out / f"{mr.MODEL}-{mr.EPOCHS}_{mr.STEPS}.ckpt")], cwd=tmp)
    result["validate"] = mr.read_validate(stdout)
    return result


def _floor(base: dict, noisy: list[dict]) -> dict:
    """The largest change of each compared number over the noisy runs."""
    def worst(get):
        return np.max([np.abs(np.asarray(get(n), np.float64) - np.asarray(get(base), np.float64))
                       for n in noisy], axis=0).tolist()

    return {
        "step_loss": worst(lambda r: r["step_loss"]),
        "summary": {step: {tag: worst(lambda r, s=step, t=tag: r["summary"][s][t]) for tag in values}
                    for step, values in base["summary"].items()},
        "kept": {k: float(np.max(worst(lambda r, k=k: r["final"]["kept"][k]))) for k in mr.KEPT},
        "abs_sum": {k: worst(lambda r, k=k: r["final"]["abs_sum"][k]) for k in base["final"]["abs_sum"]},
        "validate": {k: worst(lambda r, k=k: r["validate"][k]) for k in base["validate"]},
    }


def main(out_dir: str) -> None:
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    init = out / "init-0_0.ckpt"
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        data = tmp / "data"
        make_dataset_files.imagenet_folder(data)
        if not init.exists():
            mr.run([*MS, str(mr.CKPT_TOOL), "init", str(init)], cwd=tmp)
        inits = {"plain": init, "ema": tmp / "ema-0_0.ckpt"}
        mr.run([*MS, str(mr.CKPT_TOOL), "ema", str(init), str(inits["ema"])], cwd=tmp)
        runs, floors = {}, {}
        for kind in ("plain", "ema"):
            runs[kind] = _one(tmp, data, inits[kind], kind, "base")
            noisy = []
            for seed in range(NOISE_RUNS):
                noisy_init = tmp / f"{kind}_noise{seed}-0_0.ckpt"
                tool = [*MS, str(mr.CKPT_TOOL), "noise", str(inits[kind])]
                mr.run([*tool, str(noisy_init), str(seed)], cwd=tmp)
                noisy.append(_one(tmp, data, noisy_init, kind, f"noise{seed}"))
            floors[kind] = _floor(runs[kind], noisy)
            print(kind, runs[kind]["step_loss"], runs[kind]["validate"], flush=True)
    recipe = {
        "mindcv": "v0.3.0 scripts (compat/mindcv_scripts), mindcv 0.3.0 package",
        "mindspore": "2.10 CPU",
        "data": "compat/record/make_dataset_files.py imagenet_folder (36 PNG, 32x32, 3 classes)",
        "train": "train.py -c tiny.yaml --data_dir DATA --ckpt_path init-0_0.ckpt --ckpt_save_dir OUT "
                 "--val_while_train True [--ema True --ema_decay 0.9, from init + 'ema.' copies]",
        "validate": "validate.py -c tiny.yaml --data_dir DATA --ckpt_path "
                    f"OUT/{mr.MODEL}-{mr.EPOCHS}_{mr.STEPS}.ckpt",
        "floor": f"largest change over {NOISE_RUNS} runs from the initial weights times 1 + 1e-6 * N(0, 1)",
    }
    reference = {"recipe": recipe, "runs": runs, "floor": floors}
    (out / "reference.json").write_text(json.dumps(reference, indent=1))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "compat/tests/recorded/mindcv_script")
