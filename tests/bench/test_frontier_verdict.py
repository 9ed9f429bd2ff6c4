"""The frontier benchmark's verdict: a choice that holds no more memory and whose median step
is faster "beats" the plan; it beats it beyond noise only when it was faster in enough paired
rounds for the planner's sign test (NOTE [ Final measurement ])."""

import json
import statistics
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import frontier  # noqa: E402  (the benchmark script, imported: its verdicts run in this process)


def _row(memory, ms):
    time = statistics.median(ms) / 100.0  # none's steps take 100 ms in every round
    return {"held": int(memory * 1000), "memory": memory, "time": time, "extra": time - 1, "ms": ms,
            "wall_ms": ms}


def _report(tmp_path, capsys, rival_ms, rival_memory=0.45, png=None):
    plan_ms = [110.0, 111.0, 109.0, 110.0, 112.0, 110.0]
    rows = {"k=0": _row(1.0, [100.0] * 6), "k=2": _row(0.1, [130.0] * 6),
            "plan 0.5": _row(0.49, plan_ms), "block plan 0.5": _row(rival_memory, rival_ms)}
    saved = {"args": {"budgets": "0.5"},
             "results": {"m": {"none_held": 1000, "none_ms": 100.0, "planning_s": 1.0, "full_extra_ms": 30.0,
                               "rows": rows, "plans": {"plan 0.5": ["ops:1"]}}}}
    path = tmp_path / "run.json"
    path.write_text(json.dumps(saved))
    capsys.readouterr()
    frontier.print_saved(str(path), png)  # what ``frontier.py --table run.json [--plot png]`` prints
    out = capsys.readouterr().out
    (line,) = [ln for ln in out.splitlines() if ln.startswith("budget 0.5")]
    return line


@pytest.mark.parametrize("rival_ms, beaten, beyond", [
    # faster by the median, in 5 of 6 rounds: p = 7/64, not beyond noise
    ([108.0, 109.0, 108.0, 109.0, 113.0, 109.0], "block plan 0.5 (5 of 6 rounds)", "none"),
    # faster in every round: p = 1/64
    ([108.0, 109.0, 108.0, 109.0, 111.0, 109.0], "block plan 0.5 (6 of 6 rounds)", "['block plan 0.5']"),
    # slower by the median
    ([112.0] * 6, "none", "none"),
])
def test_beaten_only_beyond_the_rounds_noise(tmp_path, capsys, rival_ms, beaten, beyond):
    line = _report(tmp_path, capsys, rival_ms)
    assert f"beaten by: {beaten} (beyond noise: {beyond})" in line, line


def test_a_choice_holding_more_memory_never_beats_the_plan(tmp_path, capsys):
    line = _report(tmp_path, capsys, [100.0] * 6, rival_memory=0.6)
    assert "beaten by: none (beyond noise: none)" in line, line


def test_a_saved_run_is_plotted_again(tmp_path, capsys):
    png = tmp_path / "frontier.png"
    _report(tmp_path, capsys, [112.0] * 6, png=str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
