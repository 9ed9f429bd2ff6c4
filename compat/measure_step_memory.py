"""Peak memory of one mindcv training step under the layer, with and without ``.recompute()``,
next to real MindSpore's (recorded by compat/record/record_step_memory.py).

    python compat/measure_step_memory.py [--json] [--paddle-grad] [NAME ...]

Runs compat/step_memory_case.py (mindcv ResNet-50 and a ViT, mindformers' Llama: the same
MindSpore code the recorder runs) once per model and
mode, each in a fresh process, and prints the peaks and their ratio (recompute / none) beside
MindSpore's. Two meters: Paddle's host allocator (``FLAGS_enable_host_memory_stat=1``: the
peak of allocated bytes above those allocated before the step; exact) and, as for MindSpore,
the process's resident high-water mark above its resident size before the step (``VmHWM``
after writing ``5`` to ``/proc/self/clear_refs``), which counts whole pages and what the C
allocator keeps. ``--paddle-grad`` runs the grad transforms on ``paddle.grad``, their engine
before the lean backward, for comparison.
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
RECORDED = HERE / "tests" / "recorded" / "step_memory.json"
MODES = ("none", "recompute")
MIB = 1024 * 1024


def _kib(field: str) -> int:
    with open("/proc/self/status") as f:
        status = dict(line.split(":", 1) for line in f)
    return int(status[field].split()[0]) * 1024


def measure_one(name: str, mode: str, paddle_grad: bool) -> dict:
    """In this process: build ``name`` under the layer, then one step; its peaks."""
    import paddle_mindspore

    paddle_mindspore.install_import_alias()
    sys.path.insert(0, str(HERE))
    from paddle.base import core

    import step_memory_case

    if paddle_grad:
        from paddle_mindspore import _backward

        _backward.lean_gradients = lambda *args, **kwargs: None
    step, blocks = step_memory_case.make_step(name, mode == "recompute")
    before, rss_before = core.host_memory_stat_current_value("Allocated", 0), _kib("VmRSS")
    core.host_memory_stat_reset_peak_value("Allocated", 0)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # VmHWM := VmRSS
    start = time.perf_counter()
    loss = step()
    seconds = time.perf_counter() - start
    return {"peak_bytes": core.host_memory_stat_peak_value("Allocated", 0) - before,
            "rss_peak_bytes": _kib("VmHWM") - rss_before, "recomputed_blocks": blocks,
            "loss": loss, "seconds": round(seconds, 1)}


def measure(name: str, paddle_grad: bool = False) -> dict:
    env = dict(os.environ, FLAGS_enable_host_memory_stat="1")
    entry = {}
    for mode in MODES:
        args = [sys.executable, __file__, "--one", name, mode] + (["--paddle-grad"] if paddle_grad else [])
        with tempfile.TemporaryDirectory() as logs:  # mindformers writes its logs there
            done = subprocess.run(args, check=True, capture_output=True, text=True,
                                  env=dict(env, LOCAL_DEFAULT_PATH=logs))
        entry[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    for meter in ("peak_bytes", "rss_peak_bytes"):
        entry["ratio" if meter == "peak_bytes" else "rss_ratio"] = round(
            entry["recompute"][meter] / entry["none"][meter], 3)
    return entry


def _table(results: dict, recorded: dict) -> str:
    lines = ["| model (input, batch) | MindSpore 2.10: none / recompute (ratio) | layer, allocator: "
             "none / recompute (ratio) | layer, resident: none / recompute (ratio) |", "|---|---|---|---|"]
    for name, ours in results.items():
        theirs = recorded.get(name)
        ms_cell = "-" if theirs is None else (
            f"{theirs['none']['peak_bytes'] / MIB:.0f} / {theirs['recompute']['peak_bytes'] / MIB:.0f} MiB "
            f"({theirs['ratio']:.3f}x)")
        size, batch = ours["case"]
        unit = "tokens" if name == "mindformers_llama" else "px"
        lines.append(
            f"| {name} ({size} {unit}, {batch}) | {ms_cell} | {ours['none']['peak_bytes'] / MIB:.0f} / "
            f"{ours['recompute']['peak_bytes'] / MIB:.0f} MiB ({ours['ratio']:.3f}x) | "
            f"{ours['none']['rss_peak_bytes'] / MIB:.0f} / "
            f"{ours['recompute']['rss_peak_bytes'] / MIB:.0f} MiB "
            f"({ours['rss_ratio']:.3f}x) |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    paddle_grad = "--paddle-grad" in argv
    if argv[:1] == ["--one"]:
        print(json.dumps(measure_one(argv[1], argv[2], paddle_grad)))
        return 0
    sys.path.insert(0, str(HERE))
    os.environ.setdefault("PYTHONPATH", str(HERE))
    import paddle_mindspore

    paddle_mindspore.install_import_alias()
    import step_memory_case

    names = [a for a in argv if not a.startswith("--")] or list(step_memory_case.CASES)
    results = {}
    for name in names:
        results[name] = measure(name, paddle_grad)
        results[name]["case"] = step_memory_case.CASES[name]
    recorded = json.loads(RECORDED.read_text()) if RECORDED.exists() else {}
    print(json.dumps(results) if "--json" in argv else _table(results, recorded))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
