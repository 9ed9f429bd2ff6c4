"""Where a plan's time went: wall clock and CPU time per planning stage (``Plan.timings``).

The stages, in the order ``plan`` runs them: ``profile`` (the profiling forwards, nothing
when a profile is given), ``record_ops`` (recording the units' operators for the ``ops``
option), ``measure_options`` (the measured region options, a region's own cost and any
calibration), ``solve`` (the solvers) and ``final`` (the final measured choice: NOTE [ Final
measurement ] in ``final_choice.py``); ``total`` is the whole call, checks included, so it is
at least the stages' sum.  ``cpu_s`` is this process's CPU time (every thread's), the
steadier of the two on a shared machine, where the wall clock is mostly waiting.
"""

from __future__ import annotations

import contextlib
import time

__all__ = ["STAGES", "Timings", "timings_line"]

STAGES = ("profile", "record_ops", "measure_options", "solve", "final")


class Timings:
    """Seconds per stage, wall clock and CPU time, from its creation to :meth:`as_dict`."""

    def __init__(self) -> None:
        self.spent = {stage: [0.0, 0.0] for stage in STAGES}
        self.start = (time.perf_counter(), time.process_time())

    @contextlib.contextmanager
    def stage(self, name: str):
        """Add the time spent inside the ``with`` block to ``name``."""
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            row = self.spent[name]
            row[0] += time.perf_counter() - wall
            row[1] += time.process_time() - cpu

    def as_dict(self) -> dict:
        """``{stage: {"wall_s", "cpu_s"}}`` for each stage and ``total`` (so far)."""
        out = {stage: {"wall_s": w, "cpu_s": c} for stage, (w, c) in self.spent.items()}
        out["total"] = {"wall_s": time.perf_counter() - self.start[0],
                        "cpu_s": time.process_time() - self.start[1]}
        return out


def timings_line(timings: dict) -> str:
    """One line: the total and each stage, wall clock (CPU time)."""
    parts = ", ".join(f"{stage.replace('_', ' ')} {row['wall_s']:.1f} s ({row['cpu_s']:.1f} s)"
                      for stage, row in timings.items() if stage != "total")
    total = timings["total"]
    return (f"planned in {total['wall_s']:.1f} s of wall clock ({total['cpu_s']:.1f} s of CPU "
            f"time): {parts}")
