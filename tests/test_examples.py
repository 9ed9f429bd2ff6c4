"""Every example (and benchmark script) runs, at tiny sizes, as a user would start it."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GPT_TINY = ["--blocks", "2", "--hidden", "32", "--heads", "2", "--seq", "16", "--batch", "2", "--vocab", "64"]

CASES = {
    "examples/quickstart.py": ([], "identical, bit for bit"),
    "examples/gpt_pretrain.py": (["--recompute", "0", "--steps", "2", "--check", *GPT_TINY],
                                 "check: losses are bit-for-bit equal"),
    "examples/gpt_pretrain.py non-reentrant": (["--recompute", "all", "--non-reentrant", "--steps", "1",
                                                *GPT_TINY], "recomputing blocks [0, 1] (non-reentrant)"),
    "examples/resnet.py": (["--steps", "1", "--batch", "2", "--image", "16"], "are bit-for-bit identical"),
    "examples/data_parallel.py": (["--steps", "2", "--blocks", "2", "--hidden", "16", "--batch", "8"],
                                  "DataParallel with recompute: bit-for-bit equal"),
    "examples/planner_budget.py": (["--steps", "1", *GPT_TINY], "bit-for-bit equal"),
    "examples/paddleformers_llama.py": (["--steps", "2", "--layers", "2", "--hidden", "32", "--seq", "16",
                                         "--batch", "2", "--vocab", "64"], "bit-for-bit equal"),
    "benchmarks/gpt.py": (["--rounds", "1", "--quiet", "--modes", "ours reentrant", *GPT_TINY],
                          "bit-for-bit equal to none (asserted)"),
    "benchmarks/frontier.py": (["--models", "gpt,llama", "--blocks", "2", "--hidden", "32", "--seq", "16",
                                "--batch", "2", "--vocab", "64", "--rounds", "1"], "budget 0.25: plan fits"),
    "benchmarks/overhead.py": (["--rounds", "1", "--warmup", "0", "--blocks", "4"], "| ours non-reentrant |"),
}
TIMEOUT_S = {"examples/data_parallel.py": 120}


@pytest.mark.parametrize("case", list(CASES))
def test_example_runs(case):
    script = case.split(" ")[0]
    args, expected = CASES[case]
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, PYTHONPATH=path)  # this checkout's package, not an installed one
    proc = subprocess.run([sys.executable, str(ROOT / script), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT_S.get(script, 90))
    assert proc.returncode == 0, f"{script} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert expected in proc.stdout, proc.stdout[-3000:]
