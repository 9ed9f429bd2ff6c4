"""Record mindcv's own train.py and validate.py under real MindSpore 2.10, with its noise floor.

    python compat/record/record_mindcv_script.py compat/tests/recorded/mindcv_script
    python compat/record/record_mindcv_script.py compat/tests/recorded/mindcv_script --extend

Runs in the project's environment and drives MindSpore's (``MS_PYTHON``, default
/work/msvenv/bin/python, under ``nice -n 19``). Writes ``init-0_0.ckpt`` (MindSpore's initial
shufflenet_v2_x0_5; train.py resumes from it, so both sides start from MindSpore's weights)
and ``reference.json``: for the plain and the ``--ema`` recipe, what
``mindcv_script_run.read_train`` reads back and validate.py's result on the last checkpoint,
plus the floor: the largest change that ``NOISE_RUNS`` runs from the initial weights times
``1 + 1e-6 * N(0, 1)`` make to each number (noise seeds 0, 1, ...).

``--extend`` adds draws to a recording: it runs the noise seeds the recording lacks, up to
``NOISE_RUNS``, each compared with the recorded base run as the first draws were, and takes
the largest change over the old floor and the new draws. ``reference.json`` is rewritten after
each draw, with the number of draws per recipe (``noise_runs``) and each draw's own changes
(``draws``: recipe -> seed -> changes, shaped as the floor); the draws of a recording made before
draws were kept one by one are kept as their floor (``floor_first_draws``; zeros when every draw
is kept). The test derives its floor's factor from the spread of these draws.
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
NOISE_RUNS = 10
# seconds a MindSpore command may take: under nice 19 on the shared 2-core machine one train.py
# took over 600 s (about 4 min on a free core)
RUN_TIMEOUT = 3600


def _one(tmp: Path, data: Path, init: Path, kind: str, tag: str) -> dict:
    out = tmp / f"{kind}_{tag}"
    mr.run([*MS, *mr.train_args(data, init, out.name, kind)], cwd=tmp, timeout=RUN_TIMEOUT)
    result = mr.read_train(out)
    ckpt = out / f"{mr.MODEL}-{mr.EPOCHS}_{mr.STEPS}.ckpt"
    stdout = mr.run([*MS, *mr.validate_args(data, ckpt)], cwd=tmp, timeout=RUN_TIMEOUT)
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


def _merge(old, new):
    """The larger of two floors, number by number."""
    if isinstance(old, dict):
        return {k: _merge(old[k], new[k]) for k in old}
    return np.maximum(np.asarray(old, np.float64), np.asarray(new, np.float64)).tolist()


def _noisy(tmp: Path, data: Path, init: Path, kind: str, seed: int) -> dict:
    noisy_init = tmp / f"{kind}_noise{seed}-0_0.ckpt"
    tool = [*MS, str(mr.CKPT_TOOL), "noise", str(init), str(noisy_init), str(seed)]
    mr.run(tool, cwd=tmp, timeout=RUN_TIMEOUT)
    return _one(tmp, data, noisy_init, kind, f"noise{seed}")


def _setup(tmp: Path, out: Path) -> tuple[Path, dict]:
    data = tmp / "data"
    make_dataset_files.imagenet_folder(data)
    init = out / "init-0_0.ckpt"
    if not init.exists():
        mr.run([*MS, str(mr.CKPT_TOOL), "init", str(init)], cwd=tmp, timeout=RUN_TIMEOUT)
    inits = {"plain": init, "ema": tmp / "ema-0_0.ckpt"}
    mr.run([*MS, str(mr.CKPT_TOOL), "ema", str(init), str(inits["ema"])], cwd=tmp, timeout=RUN_TIMEOUT)
    return data, inits


def _write(out: Path, runs: dict, floors: dict, counts: dict, draws: dict, first: dict) -> None:
    reference = {"recipe": _recipe(counts), "runs": runs, "floor": floors, "noise_runs": counts,
                 "draws": draws, "floor_first_draws": first}
    (out / "reference.json").write_text(json.dumps(reference, indent=1))


def extend(out_dir: str) -> None:
    """More noise draws for a recording whose base runs MindSpore reproduces exactly."""
    out = Path(out_dir).resolve()
    reference = json.loads((out / "reference.json").read_text())
    runs, floors = reference["runs"], reference["floor"]
    counts = reference.get("noise_runs", {kind: 3 for kind in runs})  # the first recording's 3
    draws = reference.get("draws", {})
    # the draws recorded before draws were kept one by one, as their floor
    first = reference.get("floor_first_draws", json.loads(json.dumps(floors)))
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        data, inits = _setup(tmp, out)
        for seed in range(min(counts.values()), NOISE_RUNS):
            for kind in runs:
                if counts[kind] > seed:
                    continue
                change = _floor(runs[kind], [_noisy(tmp, data, inits[kind], kind, seed)])
                floors[kind] = _merge(floors[kind], change)
                draws.setdefault(kind, {})[str(seed)] = change
                counts[kind] = seed + 1
                _write(out, runs, floors, counts, draws, first)
                print(kind, "seed", seed, "done", flush=True)


def main(out_dir: str) -> None:
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        data, inits = _setup(tmp, out)
        runs, floors, draws, first = {}, {}, {}, {}
        for kind in ("plain", "ema"):
            runs[kind] = _one(tmp, data, inits[kind], kind, "base")
            noisy = [_noisy(tmp, data, inits[kind], kind, seed) for seed in range(NOISE_RUNS)]
            floors[kind] = _floor(runs[kind], noisy)
            draws[kind] = {str(seed): _floor(runs[kind], [n]) for seed, n in enumerate(noisy)}
            first[kind] = _floor(runs[kind], [runs[kind]])  # every draw kept: zeros
            print(kind, runs[kind]["step_loss"], runs[kind]["validate"], flush=True)
    _write(out, runs, floors, {kind: NOISE_RUNS for kind in runs}, draws, first)


def _recipe(counts: dict) -> dict:
    runs = ", ".join(f"{n} ({kind})" for kind, n in counts.items())
    return {
        "mindcv": "v0.3.0 scripts (compat/mindcv_scripts), mindcv 0.3.0 package",
        "mindspore": "2.10 CPU",
        "data": "compat/record/make_dataset_files.py imagenet_folder (36 PNG, 32x32, 3 classes)",
        "train": "train.py -c tiny.yaml --data_dir DATA --ckpt_path init-0_0.ckpt --ckpt_save_dir OUT "
                 "--val_while_train True [--ema True --ema_decay 0.9, from init + 'ema.' copies]",
        "validate": "validate.py -c tiny.yaml --data_dir DATA --ckpt_path "
                    f"OUT/{mr.MODEL}-{mr.EPOCHS}_{mr.STEPS}.ckpt",
        "floor": f"largest change over {runs} runs from the initial weights times 1 + 1e-6 * N(0, 1) "
                 "(noise seeds 0, 1, ...)",
    }


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--extend"]
    (extend if "--extend" in sys.argv else main)(args[0] if args else "compat/tests/recorded/mindcv_script")
