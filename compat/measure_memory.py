"""Peak memory of the 10-block tutorial network, without and with ``b.recompute()`` per block.

MindSpore's "Recomputation" tutorial reads the peak dynamic memory of one gradient run from
its allocator log (167 MB without recomputation, 69 MB with it: 0.41x). This measures the
same run of the ported programs (compat/c_block_tutorial.py and
compat/c_block_tutorial_recompute.py) with Paddle's allocator statistics: the peak of
allocated host memory while the script runs (network creation, input, forward and backward),
above what was allocated before it started.

Usage:
    python compat/measure_memory.py           # table
    python compat/measure_memory.py --json    # one JSON object
    python compat/measure_memory.py --modes   # also b.recompute(use_reentrant=False) and
                                              # b.recompute(output_recompute=True)
    python compat/measure_memory.py --modes --backward
        # the same runs, but GradOperation takes the gradient with Tensor.backward() instead of
        # paddle.grad (see compat/README.md, Memory: why the non-reentrant rows differ)

It re-executes itself with FLAGS_enable_host_memory_stat=1, which Paddle reads at import.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import runpy
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
VARIANTS = {
    "without recompute": os.path.join(HERE, "c_block_tutorial.py"),
    "with b.recompute()": os.path.join(HERE, "c_block_tutorial_recompute.py"),
}
MINDSPORE_MB = {"without recompute": 167, "with b.recompute()": 69}
MIB = 1024 * 1024


EXTRA_MODES = {
    "with b.recompute(use_reentrant=False)": {"use_reentrant": False},
    "with b.recompute(output_recompute=True)": {"output_recompute": True},
}


@contextlib.contextmanager
def _block_options(options: dict | None):
    """Make the script's ``b.recompute()`` calls pass ``options``."""
    from paddle_mindspore import nn

    if not options:
        yield
        return
    original = nn.Cell.recompute
    nn.Cell.recompute = lambda self: original(self, **options)
    try:
        yield
    finally:
        nn.Cell.recompute = original


class _BackwardGradOperation:
    """``ops.GradOperation()`` (gradient w.r.t. the first input) computed with ``Tensor.backward``."""

    def __call__(self, fn):
        import paddle

        def after_grad(x):
            leaf = x.detach()
            leaf.stop_gradient = False
            out = fn(leaf)
            out.backward(paddle.ones_like(out))
            return leaf.grad

        return after_grad


@contextlib.contextmanager
def _grad_engine(backward: bool):
    """Swap ``ops.GradOperation`` for :class:`_BackwardGradOperation` while the script runs."""
    from paddle_mindspore import ops

    if not backward:
        yield
        return
    original = ops.GradOperation
    ops.GradOperation = _BackwardGradOperation
    try:
        yield
    finally:
        ops.GradOperation = original


def _measure(script: str, options: dict | None = None, backward: bool = False) -> dict:
    """Run ``script`` once; peak allocated bytes above the starting point, and wall time."""
    import gc

    from paddle.base import core

    import paddle_mindspore as ms

    ms.set_seed(0)
    gc.collect()
    base = core.host_memory_stat_current_value("Allocated", 0)
    core.host_memory_stat_reset_peak_value("Allocated", 0)
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), _block_options(options), _grad_engine(backward):
        namespace = runpy.run_path(script)
    seconds = time.perf_counter() - start
    peak = core.host_memory_stat_peak_value("Allocated", 0) - base
    digest = hashlib.sha256(namespace["output"].numpy().tobytes()).hexdigest()
    del namespace
    gc.collect()
    return {"peak_bytes": int(peak), "peak_mib": round(peak / MIB, 1), "seconds": round(seconds, 2),
            "output_sha256": digest}


def measure_all(modes: bool = False, backward: bool = False) -> dict:
    """Both variants in this process (FLAGS_enable_host_memory_stat must already be set)."""
    results = {name: _measure(path, None, backward) for name, path in VARIANTS.items()}
    if modes:
        for name, options in EXTRA_MODES.items():
            results[name] = _measure(VARIANTS["with b.recompute()"], options, backward)
    ratio = results["with b.recompute()"]["peak_bytes"] / results["without recompute"]["peak_bytes"]
    return {"engine": "Tensor.backward" if backward else "paddle.grad", "variants": results,
            "ratio": round(ratio, 3),
            "mindspore_mb": MINDSPORE_MB, "mindspore_ratio": round(69 / 167, 2)}


def _table(report: dict) -> str:
    lines = ["| run | MindSpore (tutorial) | paddle-recompute (this machine) |", "|---|---|---|"]
    base = report["variants"]["without recompute"]["peak_bytes"]
    for name, res in report["variants"].items():
        theirs = f"{MINDSPORE_MB[name]} MB" if name in MINDSPORE_MB else "-"
        lines.append(f"| {name} | {theirs} | {res['peak_mib']} MiB ({res['peak_bytes'] / base:.3f}x) |")
    lines.append(f"| ratio with / without | {report['mindspore_ratio']}x | {report['ratio']}x |")
    same = len({res["output_sha256"] for res in report["variants"].values()}) == 1
    lines.append(f"\ngradient engine: {report['engine']}; gradient bit-for-bit identical in every row: "
                 f"{'yes' if same else 'NO'}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if os.environ.get("FLAGS_enable_host_memory_stat") not in ("1", "true", "True"):
        env = dict(os.environ, FLAGS_enable_host_memory_stat="1")
        return subprocess.call([sys.executable, os.path.abspath(__file__), *argv], env=env)
    report = measure_all(modes="--modes" in argv, backward="--backward" in argv)
    print(json.dumps(report) if "--json" in argv else _table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
