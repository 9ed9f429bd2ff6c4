"""MindSpore's noise floor for the gradients and weights a mindformers training script dumps
(``--grads``: ``grad/<name>``, the first step's gradient of each trained parameter, and
``param/<name>``, each parameter after the last step). Shared by
``record_mindformers_llama.py``, ``record_mindformers_glm2.py`` and ``record_mindformers_qwen3.py``;
numpy only.

The floor of an entry is the largest absolute change, over MindSpore's own runs with 1e-6
relative noise on the initial weights (and one with each batch's rows reversed), from its run
without noise. For a ``param/`` entry the change is that of what training moved the weights,
``final - initial``, each run from its own initial weights: the injected noise itself (1e-6 of a
weight, some 20 float32 ulps of it) is no arithmetic difference and is left out. A noisy run's
initial weights are what the script loaded: its own ``--grads`` dump after ``--steps 0``.
"""

from __future__ import annotations

import numpy as np


def load(path) -> dict:
    with np.load(path) as dump:
        return {key: dump[key] for key in dump.files}


def moved(dump: dict, initial: dict) -> dict:
    """``dump`` with each ``param/`` entry replaced by its change from ``initial``."""
    return {key: value.astype(np.float64) - initial[key] if key.startswith("param/") else
            value.astype(np.float64) for key, value in dump.items()}


def floor(base: dict, base_initial: dict, others: list[tuple[dict, dict]]) -> dict:
    """Per entry, the largest absolute change over ``others`` (pairs of a dump and the initial
    weights it started from, ``param/`` keys) from ``base``."""
    reference = moved(base, base_initial)
    worst = dict.fromkeys(reference, 0.0)
    for dump, initial in others:
        assert dump.keys() == reference.keys(), sorted(set(dump) ^ set(reference))
        for key, value in moved(dump, initial).items():
            worst[key] = max(worst[key], float(np.max(np.abs(value - reference[key]), initial=0.0)))
    return worst


def noise_runs(run, tmp, init, seeds) -> tuple[list, list]:
    """The script's runs from ``init`` with noise seeds ``seeds`` and with each batch's rows
    reversed (``run(tmp, *args)`` runs it and returns its ``--out`` JSON): their losses, and
    pairs of their dump and the initial weights each started from, for ``floor``."""
    losses, dumps = [], []
    for seed in seeds:
        flags = ("--init", str(init), "--noise", str(seed), "--grads")
        losses.append(run(tmp, *flags, str(tmp / f"noise{seed}.npz"))["losses"])
        run(tmp, *flags, str(tmp / f"noise{seed}_init.npz"), "--steps", "0")
        dumps.append((load(tmp / f"noise{seed}.npz"), load(tmp / f"noise{seed}_init.npz")))
    losses.append(run(tmp, "--init", str(init), "--reverse-batch", "--grads", str(tmp / "rev.npz"))["losses"])
    dumps.append((load(tmp / "rev.npz"), initial_weights(init)))
    return losses, dumps


def initial_weights(init) -> dict:
    """``init``'s weights keyed as a dump's final weights (``param/<name>``)."""
    return {f"param/{key}": value for key, value in load(init).items()}


def largest_difference(a: dict, b: dict) -> float:
    """The largest absolute difference over every entry of two dumps (0.0: bit for bit equal)."""
    assert a.keys() == b.keys(), sorted(set(a) ^ set(b))
    return max(float(np.max(np.abs(a[k].astype(np.float64) - b[k]), initial=0.0)) for k in a)
