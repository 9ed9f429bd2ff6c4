"""mindcv's ``StateMonitor`` callback in a small ``Model.train`` loop, as mindcv's train.py uses
it: mindcv's cosine scheduler with warmup, its AdamW through ``create_optimizer``, its CE loss,
validation each epoch, top-k checkpoints, the optimizer checkpoint and the summary file.

    python compat/record/state_monitor_train.py compat/tests/recorded/state_monitor.json

records what real MindSpore 2.10 gives; compat/tests/test_ms_mindcv_optim.py imports this
file under the layer's import alias, runs :func:`run` and compares.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile

import mindcv
import mindspore as ms
import numpy as np
from mindcv.scheduler import create_scheduler
from mindcv.utils.callbacks import StateMonitor
from mindspore import Tensor, nn


class _Lines(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def _logged(lines: list[str], key: str) -> list[float]:
    """The numbers after ``key`` in StateMonitor's log lines (loss, lr)."""
    return [float(line.split(f"{key}: ")[1].split(",")[0]) for line in lines if f" {key}: " in line]


def run(out: str) -> dict:
    rng = np.random.RandomState(0)
    x = rng.standard_normal((16, 3)).astype(np.float32)
    y = (rng.rand(16) * 2).astype(np.int32)
    train = ms.dataset.NumpySlicesDataset((x, y), column_names=["x", "y"], shuffle=False).batch(4)
    val = ms.dataset.NumpySlicesDataset((x, y), column_names=["x", "y"], shuffle=False).batch(8)
    net = nn.Dense(3, 2, weight_init=Tensor(np.ones((2, 3), np.float32) * 0.1), bias_init="zeros")
    lr = create_scheduler(4, scheduler="cosine_decay", lr=0.1, min_lr=0.01, warmup_epochs=1, decay_epochs=2,
                          num_epochs=3)
    opt = mindcv.create_optimizer(net.trainable_params(), "adamw", lr=lr, weight_decay=0.01)
    metrics = {"Top_1_Accuracy": nn.Top1CategoricalAccuracy()}
    model = ms.Model(net, mindcv.create_loss("CE"), opt, metrics=metrics)
    monitor = StateMonitor(model, model_name="dense", dataset_sink_mode=False, dataset_val=val,
                           metric_name=["Top_1_Accuracy"], ckpt_save_dir=out, ckpt_save_policy="top_k",
                           ckpt_keep_max=2, summary_dir=out, log_interval=2)
    lines = _Lines()
    logger = logging.getLogger("mindcv.utils.callbacks")
    logger.addHandler(lines)
    logger.setLevel(logging.INFO)
    try:
        model.train(3, train, callbacks=[monitor], dataset_sink_mode=False)
    finally:
        logger.removeHandler(lines)
    table = open(os.path.join(out, "result.log")).read().splitlines()
    optim = ms.load_checkpoint(os.path.join(out, "optim_dense.ckpt"))
    return {
        "logged_loss": _logged(lines.lines, "loss"),
        "logged_lr": _logged(lines.lines, "lr"),
        "epoch_loss": [float(row.split()[1]) for row in table[1:]],
        "epoch_accuracy": [row.split()[2] for row in table[1:]],
        "global_step": opt.global_step.asnumpy().tolist(),
        "weight": net.weight.asnumpy().tolist(),
        "bias": net.bias.asnumpy().tolist(),
        "files": sorted(f for f in os.listdir(out) if not f.startswith("events.")),
        "summary_files": sum(f.startswith("events.") for f in os.listdir(out)),
        "optim_ckpt": {k: v.asnumpy().astype(np.float64).ravel().tolist() for k, v in optim.items()},
        "best_ckpt": sorted(ms.load_checkpoint(os.path.join(out, "dense_best.ckpt"))),
    }


if __name__ == "__main__":
    ms.set_seed(1)
    with tempfile.TemporaryDirectory() as directory:
        result = run(directory)
    result["mindspore"] = ms.__version__
    with open(sys.argv[1], "w") as f:
        json.dump(result, f, indent=0, sort_keys=True)
        f.write("\n")
