"""Record real MindSpore 2.10's peak memory of one training step, with and without ``.recompute()``.

    /work/msvenv/bin/python compat/record/record_step_memory.py [NAME ...]

Runs compat/step_memory_case.py (mindcv ResNet-50 and a ViT, mindformers' Llama;
``value_and_grad`` then the optimizer) once per model and mode, each in a fresh process,
PyNative on CPU, and writes ``compat/tests/recorded/step_memory.json``: per model, the peak
bytes of each mode and their ratio (recompute / none).

The meter: MindSpore 2.10 keeps no allocator statistics on CPU (``mindspore.runtime``'s
``max_memory_allocated()`` and ``memory_stats()`` stay 0), so the peak is the process's
resident memory: the high-water mark (``VmHWM``, reset to the current resident size by writing
``5`` to ``/proc/self/clear_refs`` just before the step) above the resident size before the
step. Caveats: MindSpore's CPU memory pool keeps what it grew, so only the first step of a
process shows its peak (a second step reuses the pool and adds little); that first step also
pays one-time costs (the pool's growth in blocks, kernel set-up) that both modes share, which
pulls the ratio toward 1; resident memory counts whole pages.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "tests" / "recorded" / "step_memory.json"
MODES = ("none", "recompute")


def _status() -> dict:
    with open("/proc/self/status") as f:
        return dict(line.split(":", 1) for line in f)


def _kib(field: str) -> int:
    return int(_status()[field].split()[0]) * 1024


def measure_one(name: str, mode: str) -> dict:
    """In this process: build ``name``, then one step; its peak resident bytes above the start."""
    import mindspore as ms

    sys.path.insert(0, str(HERE.parent))
    import step_memory_case

    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_device("CPU")
    step, blocks = step_memory_case.make_step(name, mode == "recompute")
    before = _kib("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # VmHWM := VmRSS
    start = time.perf_counter()
    loss = step()
    seconds = time.perf_counter() - start
    return {"peak_bytes": _kib("VmHWM") - before, "recomputed_blocks": blocks, "loss": loss,
            "seconds": round(seconds, 1)}


def main(argv: list[str]) -> int:
    if argv[:1] == ["--one"]:
        print(json.dumps(measure_one(argv[1], argv[2])))
        return 0
    sys.path.insert(0, str(HERE.parent))
    import step_memory_case

    names = argv or list(step_memory_case.CASES)
    record = json.loads(OUT.read_text()) if OUT.exists() else {}
    import mindspore

    for name in names:
        size, batch = step_memory_case.CASES[name]
        size_key = "seq_length" if name == "mindformers_llama" else "image_size"
        entry = {size_key: size, "batch": batch, "meter": "process resident memory (VmHWM)",
                 "mindspore": mindspore.__version__}
        for mode in MODES:
            with tempfile.TemporaryDirectory() as logs:  # mindformers writes its logs there
                done = subprocess.run([sys.executable, __file__, "--one", name, mode], check=True,
                                      capture_output=True, text=True,
                                      env=dict(os.environ, LOCAL_DEFAULT_PATH=logs))
            entry[mode] = json.loads(done.stdout.strip().splitlines()[-1])
            print(name, mode, entry[mode], flush=True)
        entry["ratio"] = round(entry["recompute"]["peak_bytes"] / entry["none"]["peak_bytes"], 3)
        record[name] = entry
        OUT.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
