"""The fixed inputs of record_metrics.py (numpy only; the tests import them too)."""
from __future__ import annotations

import numpy as np


def inputs():
    """Two batches of (logits (n, 7) float32, labels (n,) int32)."""
    rng = np.random.RandomState(3)
    batches = []
    for n in (6, 5):
        logits = rng.standard_normal((n, 7)).astype(np.float32)
        labels = rng.randint(0, 7, size=n).astype(np.int32)
        batches.append((logits, labels))
    return batches


def multilabel():
    """Two batches of 0/1 (predictions, labels), shape (4, 3)."""
    rng = np.random.RandomState(4)
    return [(rng.randint(0, 2, size=(4, 3)), rng.randint(0, 2, size=(4, 3))) for _ in range(2)]
