"""The benchmark's figure: memory against time for every mode (matplotlib, imported lazily)."""

from __future__ import annotations

from typing import Any

from .memory import MiB

__all__ = ["plot_memory_time", "plot_frontier", "require_matplotlib"]


def require_matplotlib() -> Any:
    """matplotlib's ``Figure`` class (drawn without pyplot: no global backend is touched).

    Raises:
        ImportError: matplotlib is not installed (names the package to install).
    """
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(
            "bench --plot needs matplotlib: pip install matplotlib "
            "(or pip install 'paddle-recompute[bench]')"
        ) from None
    return Figure


def plot_memory_time(path: str, title: str, rows: dict[str, dict[str, Any]],
                     timelines: dict[str, list[tuple[float, int]]]) -> None:
    """Write a PNG with two panels.

    Left: allocated memory over one training step of each mode (sampled while it ran).
    Right: each mode's median peak and forward-activation memory against its median
    step time.

    Raises:
        ImportError: matplotlib is missing (names the package to install).
    """
    fig = require_matplotlib()(figsize=(13, 5))
    left, right = fig.subplots(1, 2)
    for mode, samples in timelines.items():
        if samples:
            left.plot([1e3 * t for t, _ in samples], [b / MiB for _, b in samples], label=mode, lw=1.2)
    left.set(xlabel="time in one training step (ms)", ylabel="allocated above step start (MiB)",
             title="memory during one step")
    left.legend(fontsize=8)
    for mode, row in rows.items():
        if "error" in row:
            continue
        line, = right.plot([row["step_ms"]], [row["peak_mib"]], "o", label=f"{mode} (peak)")
        right.plot([row["step_ms"]], [row["forward_mib"]], "s", color=line.get_color(), mfc="none",
                   label=f"{mode} (fwd activations)")
    right.set(xlabel="median step time (ms)", ylabel="MiB above step start",
              title="memory vs. step time (medians)")
    right.set_xlim(left=0)  # from zero, so distances read as ratios
    right.set_ylim(bottom=0)
    right.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def plot_frontier(path: str, title: str, curves: dict[str, list[tuple[float, float]]],
                  marked: tuple[float, float] | None = None,
                  points: dict[str, tuple[float, float]] | None = None) -> None:
    """Write a PNG of memory/time frontiers: per label, (memory vs none, extra time as a
    fraction of full recompute's) points joined as a step line; ``points``: single named
    choices (presets, policies); ``marked``: the chosen plan.

    Raises:
        ImportError: matplotlib is missing (names the package to install).
    """
    fig = require_matplotlib()(figsize=(7, 5))
    ax = fig.subplots()
    for label, xy in curves.items():
        if xy:
            ax.step([x for x, _ in xy], [y for _, y in xy], where="post", marker=".", lw=1.2,
                    label=label)
    for label, (x, y) in (points or {}).items():
        ax.plot([x], [y], "s", mfc="none", label=label)
    if marked is not None:
        ax.plot([marked[0]], [marked[1]], "k*", ms=12, label="chosen")
    ax.set(xlabel="activation memory vs no recompute",
           ylabel="extra time / full recompute's extra time", title=title)
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
