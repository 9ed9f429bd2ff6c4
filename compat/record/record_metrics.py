"""Record MindSpore 2.10's metrics on fixed inputs (two ``update`` calls each).

/work/msvenv/bin/python compat/record/record_metrics.py compat/tests/recorded/metrics.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from mindspore import Tensor
from mindspore.train import (
    Accuracy,
    Loss,
    Precision,
    Recall,
    Top1CategoricalAccuracy,
    Top5CategoricalAccuracy,
)

sys.path.insert(0, str(Path(__file__).parent))
from metric_inputs import inputs, multilabel  # noqa: E402

CASES = {
    "accuracy": lambda: Accuracy(),
    "top1": lambda: Top1CategoricalAccuracy(),
    "top5": lambda: Top5CategoricalAccuracy(),
    "precision": lambda: Precision(),
    "recall": lambda: Recall(),
}


def run(make, batches, one_hot=False, average=None):
    metric = make()
    for logits, labels in batches:
        y = np.eye(logits.shape[1], dtype=np.int32)[labels] if one_hot else labels
        metric.update(Tensor(logits), Tensor(y))
    value = metric.eval() if average is None else metric.eval(average=average)
    return np.asarray(value, np.float64).tolist()


def main(argv):
    record = {}
    for name, make in CASES.items():
        record[name] = run(make, inputs())
        record[name + "_onehot"] = run(make, inputs(), one_hot=True)
    for name in ("precision", "recall"):
        record[name + "_average"] = run(CASES[name], inputs(), average=True)
        record[name + "_multilabel"] = run(
            lambda n=name: (Precision if n == "precision" else Recall)("multilabel"), multilabel()
        )
    record["accuracy_multilabel"] = run(lambda: Accuracy("multilabel"), multilabel())
    loss = Loss()
    loss.update(Tensor(np.array([1.5, 2.5], np.float32)))
    loss.update(Tensor(np.float32(0.25)))
    record["loss"] = float(loss.eval())
    with open(argv[0] if argv else "compat/tests/recorded/metrics.json", "w") as f:
        f.write(json.dumps(record, indent=0, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
