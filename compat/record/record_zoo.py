"""Record real MindSpore 2.10 on the mindcv 0.3.0 zoo (compat/zoo_case.py), one JSON per model.

    /work/msvenv/bin/python compat/record/record_zoo.py [--first-per-family] [NAME ...]

Writes ``tests/mindspore/recorded/zoo/<model>.json``: family, input size, parameter table,
initial weight scales, eval logits, two training losses, and the noise floor: the largest
difference MindSpore shows against itself over two draws of 1e-6 relative weight noise.
Models already recorded are skipped (the run resumes). A model MindSpore cannot build is
recorded with its error. Order: one model per family first, then the rest.
"""
from __future__ import annotations

import json
import signal
import sys
import time
import traceback
from pathlib import Path

import mindspore as ms
import numpy as np
from mindcv.models import registry

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import zoo_case  # noqa: E402

OUT = HERE.parents[1] / "tests" / "mindspore" / "recorded" / "zoo"
SIZES = (64,)  # tried first; then the model's own input size
NOISE_SEEDS = (1, 2)
LIMIT_S = 900


def family(name):
    return registry._model_to_module[name]


def ordered(names):
    first, seen = [], set()
    for name in names:
        if family(name) not in seen:
            seen.add(family(name))
            first.append(name)
    return first + [n for n in names if n not in first]


def own_size(name):
    size = registry.get_pretrained_cfg_value(name, "input_size") if registry.has_pretrained_cfg_key(
        name, "input_size") else None
    return int(size[-1]) if size else 224


def pick_size(name, scales):
    """The smallest size whose eval forward runs, with its logits."""
    for size in dict.fromkeys((*SIZES, own_size(name))):
        try:
            net = zoo_case.build(name)
            zoo_case.fill(net, scales)
            return size, zoo_case.forward(net, size)
        except Exception:  # noqa: BLE001 - the next size is tried; the last error is raised
            last = traceback.format_exc()
    raise RuntimeError(last)


def record(name):
    entry = {"model": name, "family": family(name), "mindspore": ms.__version__}
    net = zoo_case.build(name)
    entry["params"] = zoo_case.param_table(net)
    entry["scales"] = scales = zoo_case.init_scales(net)
    fixed = [p for p in net.get_parameters() if not p.requires_grad]
    entry["fixed_sum"] = float(sum(np.abs(p.asnumpy().astype(np.float64)).sum() for p in fixed))
    entry["size"], logits = pick_size(name, scales)
    clean = zoo_case.run(name, entry["size"], scales)
    entry["forward"] = clean["forward"].astype(np.float64).tolist()
    entry["losses"] = clean["losses"]
    fwd_floor, step_floor = 0.0, [0.0, 0.0]
    for seed in NOISE_SEEDS:
        noisy = zoo_case.run(name, entry["size"], scales, noise_seed=seed)
        fwd_floor = max(fwd_floor, float(np.abs(noisy["forward"] - clean["forward"]).max()))
        step_floor = [max(f, abs(a - b)) for f, a, b in zip(step_floor, noisy["losses"], clean["losses"])]
    entry["floor"] = {"forward": fwd_floor, "losses": step_floor}
    entry["eval_repeat_equal"] = bool(np.array_equal(logits, clean["forward"]))
    return entry


def _alarm(signum, frame):
    raise TimeoutError(f"recording took over {LIMIT_S} s")


def main(argv):
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    OUT.mkdir(parents=True, exist_ok=True)
    names = [a for a in argv if not a.startswith("--")] or registry.list_models()
    if "--first-per-family" in argv:
        names = list(dict.fromkeys(ordered(names)[: len({family(n) for n in names})]))
    signal.signal(signal.SIGALRM, _alarm)
    for name in ordered(names):
        path = OUT / f"{name}.json"
        if path.exists():
            continue
        start = time.time()
        signal.alarm(LIMIT_S)
        try:
            entry = record(name)
        except Exception as error:  # noqa: BLE001 - MindSpore's own failure is the record
            entry = {"model": name, "family": family(name), "mindspore": ms.__version__,
                     "error": f"{type(error).__name__}: {str(error).strip().splitlines()[-1][:300]}"}
        finally:
            signal.alarm(0)
        entry["record_s"] = round(time.time() - start, 1)
        path.write_text(json.dumps(entry) + "\n")
        print(name, entry.get("size"), entry.get("error", "ok"), entry["record_s"], flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
