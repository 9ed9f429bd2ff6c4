"""Every example (and benchmark script) runs, at tiny sizes, as a user would start it.

For each example: the command exits 0, prints its parity line (the example asserts the
parity itself, so the line appears only when it held), and its loss falls: every run of
``step k  loss v`` lines it prints ends below where it started.
"""

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
GPT_TINY = ["--blocks", "2", "--hidden", "32", "--heads", "2", "--seq", "16", "--batch", "2", "--vocab", "64"]

# name: (command, text printed only when the parity held)
EXAMPLES = {
    "quickstart": ([PY, "examples/quickstart.py"], "identical, bit for bit, as are all gradients"),
    "gpt_pretrain": ([PY, "examples/gpt_pretrain.py", "--recompute", "0", "--steps", "4", "--check",
                      *GPT_TINY], "check: losses are bit-for-bit equal"),
    "gpt_pretrain non-reentrant": ([PY, "examples/gpt_pretrain.py", "--recompute", "all", "--non-reentrant",
                                    "--steps", "4", "--check", *GPT_TINY],
                                   "check: losses are bit-for-bit equal"),
    "resnet": ([PY, "examples/resnet.py", "--steps", "3", "--batch", "4", "--image", "16"],
               "40 BatchNorm running statistics are bit-for-bit identical"),
    "data_parallel": ([PY, "examples/data_parallel.py", "--steps", "3", "--blocks", "2", "--hidden", "16",
                       "--batch", "8"], "DataParallel with recompute: bit-for-bit equal"),
    "planner_budget": ([PY, "examples/planner_budget.py", "--steps", "3", *GPT_TINY],
                       "losses with the plan are bit-for-bit equal"),
    "paddleformers_llama": ([PY, "examples/paddleformers_llama.py", "--steps", "3", "--layers", "2",
                             "--hidden", "32", "--seq", "16", "--batch", "2", "--vocab", "64"],
                            "losses with the plan are bit-for-bit equal"),
    "mindspore_port": ([PY, "-m", "paddle_mindspore", "examples/mindspore_port.py", "--steps", "3",
                        "--blocks", "2"], "losses with .recompute() are bit-for-bit equal"),
    "loss_parity_ci": ([PY, "-m", "pytest", "-q", "-s", "examples/test_loss_parity_ci.py"], "2 passed"),
    "hybrid_parallel": ([PY, "examples/hybrid_parallel.py", "--steps", "3"],
                        "tensor parallel with recompute_hybrid: bit-for-bit equal"),
    "hybrid_parallel launch": ([PY, "-m", "paddle.distributed.launch", "--nproc_per_node", "2",
                                "--log_dir", "{tmp}", "examples/hybrid_parallel.py", "--steps", "3"],
                               "equal to no recompute; each block ran twice a step"),
}
BENCHMARKS = {
    "benchmarks/gpt.py": (["--rounds", "1", "--quiet", "--modes", "ours reentrant", *GPT_TINY],
                          "bit-for-bit equal to none (asserted)"),
    "benchmarks/frontier.py": (["--models", "gpt,llama", "--blocks", "2", "--hidden", "32", "--seq", "16",
                                "--batch", "2", "--vocab", "64", "--rounds", "1"], "budget 0.25: plan fits"),
    "benchmarks/overhead.py": (["--rounds", "1", "--warmup", "0", "--blocks", "4"], "| ours non-reentrant |"),
    "benchmarks/observation.py": (["--rounds", "1", "--hidden", "32", "--seq", "16", "--blocks", "2",
                                   "--batch", "2"], "operators observed per step"),
    "benchmarks/loop_memory.py": (["--steps", "2", "--hidden", "32", "--seq", "16", "--blocks", "2",
                                   "--batch", "2"], "| ours non-reentrant |"),
    "benchmarks/ops_rerun.py": (["--rounds", "1", "--hidden", "64", "--seq", "32", "--blocks", "2",
                                 "--batch", "2"], "operators, 44 saved tensors per layer"),
    "benchmarks/thread_cost.py": (["--rounds", "2"], '"saved_tensors_per_chain": 400'),
}
# A hang guard only: an example takes seconds alone, and minutes on a loaded 2-core machine.
TIMEOUT_S = 600
STEP_LINE = re.compile(r"^step\s+(\d+)\s+loss\s+([-+0-9.e]+)", re.MULTILINE)


def _run(command: list[str], timeout: int) -> str:
    """Run ``command`` from the repository root on this checkout's package; its stdout."""
    path = os.pathsep.join(filter(None, [str(ROOT), str(ROOT / "compat"), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, PYTHONPATH=path)  # this checkout's packages, not installed ones
    proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{command} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def loss_runs(stdout: str) -> list[list[float]]:
    """The printed losses, one list per run (a run starts again at step 0)."""
    runs: list[list[float]] = []
    for step, loss in STEP_LINE.findall(stdout):
        if int(step) == 0:
            runs.append([])
        assert runs and int(step) == len(runs[-1]), f"step {step} out of order:\n{stdout[-3000:]}"
        runs[-1].append(float(loss))
    return runs


def test_every_example_is_run_here():
    scripts = {p.relative_to(ROOT).as_posix() for p in (ROOT / "examples").glob("*.py")}
    assert scripts == {next(a for a in cmd if a.startswith("examples/")) for cmd, _ in EXAMPLES.values()}


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_example_trains_with_parity(name, tmp_path):
    command, parity = EXAMPLES[name]
    stdout = _run([part.format(tmp=tmp_path) for part in command], TIMEOUT_S)
    assert parity in stdout, stdout[-3000:]
    runs = loss_runs(stdout)
    assert runs, f"no 'step k  loss v' lines:\n{stdout[-3000:]}"
    for losses in runs:
        assert len(losses) >= 2 and losses[-1] < losses[0], f"the loss did not fall: {losses}"


def test_loss_runs_reads_each_run():
    text = "step 0  loss 2.5 a\nstep 1  loss 2.0\nother\nstep 0  loss 3.0\nstep 1  loss 1e-3 b\n"
    assert loss_runs(text) == [[2.5, 2.0], [3.0, 0.001]]
    with pytest.raises(AssertionError, match="out of order"):
        loss_runs("step 0  loss 1.0\nstep 2  loss 0.5\n")


def test_mindspore_example_is_mindspore_code():
    """The runner's example imports MindSpore, never Paddle or this library: it runs unmodified."""
    tree = ast.parse((ROOT / "examples/mindspore_port.py").read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported == {"argparse", "mindspore", "numpy"}


@pytest.mark.parametrize("script", list(BENCHMARKS))
def test_benchmark_runs(script):
    args, expected = BENCHMARKS[script]
    assert expected in _run([PY, script, *args], TIMEOUT_S), script
