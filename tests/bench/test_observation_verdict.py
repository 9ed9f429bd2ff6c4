"""The observation benchmark's verdict on the 1.5% bound: met only when a one-sided 95% upper
confidence bound for the median paired ratio is within it (a sign test's order statistic)."""

import math
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
observation = pytest.importorskip("observation")  # imports PaddleFormers (test extra)


def _tail(n: int, k: int) -> float:
    """P(Binomial(n, 1/2) >= k)."""
    return sum(math.comb(n, i) for i in range(k, n + 1)) / 2 ** n


@pytest.mark.parametrize("n", [5, 6, 12, 16, 30, 40])
def test_the_upper_bound_is_the_least_order_statistic_the_sign_test_allows(n):
    ratios = [1.0 + i / 1000 for i in range(n)]
    random.Random(n).shuffle(ratios)
    bound = observation.upper_bound(ratios)
    k = round((bound - 1.0) * 1000) + 1  # its rank, 1-based
    # the median lies above the k-th of n with probability P(at least k below it) <= 5%,
    # and the (k-1)-th would not bound it at that level
    assert _tail(n, k) <= 0.05 < _tail(n, k - 1)


def test_too_few_rounds_bound_nothing():
    assert observation.upper_bound([1.0, 1.0, 1.0, 1.0]) == float("inf")  # 1/16 > 5%


def _times(save_all_forward: list[float]) -> dict:
    return {"none": [(1.0, 1.0)] * len(save_all_forward),
            "save_all": [(f, 1.0) for f in save_all_forward]}


def test_the_bound_is_met_only_when_its_upper_confidence_bound_is_within():
    usage = {m: [(0, 0.0, 0.0)] * 30 for m in ("none", "save_all")}
    within = observation.summary(_times([1.0 + i / 1000 for i in range(30)]), usage)  # steps 2.000-2.029 s
    assert within["median_paired_ratio"] == pytest.approx(1.00725)
    assert within["paired_ratio_upper95"] == pytest.approx(2.019 / 2) and within["bound_met"]
    # the same median, but a wide spread: the upper bound passes 1.5%, so not shown
    spread = [1.0 + i / 1000 for i in range(15)] + [1.02 + i / 100 for i in range(15)]
    wide = observation.summary(_times(spread), usage)
    assert wide["median_paired_ratio"] < 1.015 and not wide["bound_met"]
    assert within["phases"]["backward"]["median_paired_ratio"] == 1.0


def test_across_processes_judges_the_bound_on_each_fresh_processs_median(tmp_path):
    """``--processes``: fresh runs of the script, one median each; with two, no bound can be
    shown (the sign test needs five), and the command says so."""
    import json
    import subprocess

    out = tmp_path / "across.json"
    command = [sys.executable, "benchmarks/observation.py", "--processes", "2", "--rounds", "1",
               "--hidden", "32", "--seq", "16", "--blocks", "2", "--batch", "2", "--json", str(out)]
    stdout = subprocess.run(command, cwd=Path(__file__).resolve().parents[2], capture_output=True,
                            text=True, timeout=600, check=True).stdout
    result = json.loads(out.read_text())
    assert len(result["process_medians"]) == 2 and result["processes_upper95"] == float("inf")
    assert not result["bound_met"] and "bound is not shown" in stdout
