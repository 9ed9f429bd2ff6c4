"""Compare the ``--grads`` dumps of compat/mindformers_scripts' training scripts: ``grad/<name>``,
the first step's gradient of each trained parameter, and ``param/<name>``, each parameter after
the last step (keys as the scripts write them)."""

from __future__ import annotations

import numpy as np


def load(path) -> dict:
    with np.load(path) as dump:
        return {key: dump[key] for key in dump.files}


def assert_dumps_equal(mine: dict, base: dict, what: str) -> None:
    """Every gradient and final weight equal, bit for bit."""
    __tracebackhide__ = True
    assert sorted(mine) == sorted(base), f"{what}: entries differ: {sorted(set(mine) ^ set(base))}"
    assert any(k.startswith("grad/") for k in base) and any(k.startswith("param/") for k in base)
    for key in base:
        np.testing.assert_array_equal(mine[key], base[key], err_msg=f"{what}: {key}")


def deviations(mine: dict, theirs: dict) -> dict:
    """Per entry: the largest absolute difference, and the same in float32 ulps of the entry's
    largest magnitude (``np.spacing(max |theirs|)``)."""
    found = {}
    for key, value in theirs.items():
        diff = float(np.max(np.abs(mine[key].astype(np.float64) - value), initial=0.0))
        scale = float(np.spacing(np.float32(np.max(np.abs(value), initial=0.0))))
        found[key] = (diff, diff / scale if scale else 0.0)
    return found


def assert_within_floor(mine: dict, theirs: dict, floors: dict, factor: float) -> dict:
    """Each entry's largest difference at most ``factor`` times its floor; returns the ratios
    (difference / floor, 0 where both are 0)."""
    __tracebackhide__ = True
    assert sorted(mine) == sorted(theirs) == sorted(floors), sorted(set(mine) ^ set(theirs) ^ set(floors))
    ratios = {}
    for key, (diff, _) in deviations(mine, theirs).items():
        ratios[key] = diff / floors[key] if floors[key] else (0.0 if diff == 0 else float("inf"))
    over = {key: ratio for key, ratio in ratios.items() if ratio > factor}
    assert not over, f"{len(over)} / {len(ratios)} entries past {factor}x MindSpore's floor: {over}"
    return ratios
