"""Benchmark results: medians, ratios, loss comparison, a Markdown table and a JSON record."""

from __future__ import annotations

import statistics
from typing import Any

import numpy as np

from .memory import MiB
from .modes import BASELINE, BUILTIN
from .rounds import BenchRun

__all__ = ["summarize", "loss_check", "format_table", "MEASURES"]

# (key, column title, format) of the measures that get ratios
MEASURES = (("step_ms", "step ms", ".1f"), ("forward_mib", "fwd act MiB", ".2f"),
            ("peak_mib", "peak MiB", ".2f"))


def loss_check(run: BenchRun) -> dict[str, str]:
    """Per mode: ``"equal"`` when every loss equals the baseline's bit for bit, else the gap."""
    reference = np.array([s.loss for s in run.stats.get(BASELINE, [])])
    out = {}
    for mode, steps in run.stats.items():
        losses = np.array([s.loss for s in steps])
        if mode in run.failed:
            out[mode] = "failed"
        elif len(losses) == len(reference) and np.array_equal(losses, reference):
            out[mode] = "equal"
        else:
            n = min(len(losses), len(reference))
            out[mode] = f"DIFFER (max |d| {np.max(np.abs(losses[:n] - reference[:n]), initial=0):.3g})"
    return out


def _row(steps: list, warmup: int) -> dict[str, Any]:
    timed = steps[warmup:]
    return {
        "step_ms": 1e3 * statistics.median(s.seconds for s in timed),
        "step_ms_all": [1e3 * s.seconds for s in timed],
        "forward_mib": statistics.median(s.forward_bytes for s in timed) / MiB,
        "peak_mib": statistics.median(s.peak_bytes for s in timed) / MiB,
        "retained_mib": statistics.median(s.retained_bytes for s in timed) / MiB,
        "losses": [s.loss for s in steps],
    }


def summarize(run: BenchRun) -> dict[str, dict[str, Any]]:
    """Medians over the rounds after warm-up, with ratios to ``none`` and to the built-in."""
    rows: dict[str, dict[str, Any]] = {}
    for mode, steps in run.stats.items():
        if mode in run.failed or len(steps) <= run.warmup:
            rows[mode] = {"error": run.failed.get(mode, "no timed rounds")}
        else:
            rows[mode] = _row(steps, run.warmup)
    for row in rows.values():
        for key, _, _ in MEASURES:
            for ref in (BASELINE, BUILTIN):
                ref_value = rows.get(ref, {}).get(key)
                if key in row:
                    row[f"{key}/{ref}"] = row[key] / ref_value if ref_value else None
    return rows


def _ratio(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}x"


def format_table(rows: dict[str, dict[str, Any]], losses: dict[str, str]) -> str:
    """Markdown table: each measure, then its ratio to ``none`` and to the built-in reentrant."""
    head = ["mode"]
    for _, title, _ in MEASURES:
        head += [title, "/none", "/builtin"]
    head += ["losses vs none"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 2) + "---|"]
    for mode, row in rows.items():
        if "error" in row:
            cells = [mode, f"failed: {row['error']}"] + [""] * (len(head) - 3) + [losses.get(mode, "")]
        else:
            cells = [mode]
            for key, _, fmt in MEASURES:
                cells += [f"{row[key]:{fmt}}", _ratio(row[f"{key}/{BASELINE}"]),
                          _ratio(row[f"{key}/{BUILTIN}"])]
            cells.append(losses[mode])
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
