"""Record, with real MindSpore 2.10 on the CPU in PyNative mode, what each key of mindformers'
``TransformerRecomputeConfig`` does to compat/mindformers_scripts/llama_train.py (mindformers
2.1.0's 2-layer Llama, unmodified), for compat/tests/test_ms_mindformers_recompute_config.py.

    /work/msvenv/bin/python compat/record/record_mindformers_recompute_config.py \
        compat/tests/recorded/mindformers_llama

Writes ``recompute_config.json``: per variant (``VARIANTS``: the keys passed, as JSON), the
recompute marks mindformers makes while it builds the network (names, classes, methods and
arguments; compat/record/mindformers_recompute_marks.py), four steps' losses from the recorded
``init.npz`` (a subprocess each, as a user runs the script) and the largest difference of the
run's ``--grads`` dump (the first step's gradients, the final parameters) from the dump without
recompute (``grads_change``). No memory: MindSpore's CPU
allocator statistics read 0, and its process peak (about 590 MiB, the runtime and libraries)
cannot show this model's activations (tens to hundreds of KiB).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import mindformers_grads as mg  # noqa: E402

SCRIPT = HERE.parent / "mindformers_scripts" / "llama_train.py"
STEPS = 4
VARIANTS = {
    "none": {},
    "recompute": {"recompute": True},
    "recompute_list": {"recompute": [1]},
    "select_recompute": {"select_recompute": True},
    "select_pattern": {"select_recompute": ["feed_forward\\.mul"]},
    "select_exclude": {"select_recompute": True, "select_recompute_exclude": ["feed_forward\\.mul"]},
    "select_comm_recompute": {"select_comm_recompute": True},
    "mp_comm_recompute_off": {"recompute": True, "mp_comm_recompute": False},
    "parallel_optimizer_comm_recompute": {"recompute": True, "parallel_optimizer_comm_recompute": True},
    "recompute_slice_activation": {"recompute": True, "recompute_slice_activation": True},
}


def run(tmp: Path, init: Path, keys: dict, grads: Path) -> dict:
    out = tmp / "out.json"
    command = [sys.executable, str(SCRIPT), "--steps", str(STEPS), "--init", str(init),
               "--out", str(out), "--grads", str(grads), "--recompute-config", json.dumps(keys)]
    subprocess.run(command, check=True, cwd=tmp, capture_output=True, text=True)
    return {"losses": json.loads(out.read_text())["losses"]}


def recompute_marks() -> dict:
    import mindspore

    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(SCRIPT.parent))
    import llama_train
    from mindformers_recompute_marks import marks

    mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    result = {}
    for variant, keys in VARIANTS.items():
        found = marks(lambda k: llama_train.build(False, False, keys=k), keys)
        result[variant] = {"counts": found["counts"], "marks": found["marks"]}
    return result


def main(argv):
    dest = Path(argv[0] if argv else "compat/tests/recorded/mindformers_llama").resolve()
    init = dest / "init.npz"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        runs = {v: run(tmp, init, keys, tmp / f"{v}.npz") for v, keys in VARIANTS.items()}
        none = mg.load(tmp / "none.npz")
        for v in VARIANTS:
            runs[v]["grads_change"] = mg.largest_difference(mg.load(tmp / f"{v}.npz"), none)
        cwd = os.getcwd()
        os.chdir(tmp)  # mindformers writes its log folder (output/) into the working directory
        try:
            marks = recompute_marks()
        finally:
            os.chdir(cwd)
    import mindspore

    record = {"mindspore": mindspore.__version__, "steps": STEPS,
              "variants": {v: {"keys": VARIANTS[v], **runs[v], **marks[v]} for v in VARIANTS}}
    (dest / "recompute_config.json").write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
