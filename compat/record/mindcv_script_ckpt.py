"""Checkpoints for mindcv's train.py runs, written with MindSpore's own calls (run it under real
MindSpore or under ``paddle-mindspore``):

    mindcv_script_ckpt.py init  DST            # shufflenet_v2_x0_5, 3 classes, set_seed(1)
    mindcv_script_ckpt.py ema   SRC DST        # SRC's entries plus "ema.<name>" copies
    mindcv_script_ckpt.py noise SRC DST SEED [SCALE]  # every entry times 1 + SCALE * N(0, 1)

``train.py --ema True --ckpt_path`` needs "ema." entries (mindcv's ``load_model_checkpoint``
loads only those when ``ema=True``); ``noise`` makes the runs that measure MindSpore's floor
(SCALE 1e-6, the default); a larger SCALE makes weights off by more than that noise, to check a
test against them.
"""

from __future__ import annotations

import sys

import mindspore as ms
import numpy as np


def main(argv: list[str]) -> None:
    kind = argv[0]
    if kind == "init":
        import mindcv

        ms.set_seed(1)
        ms.save_checkpoint(mindcv.create_model("shufflenet_v2_x0_5", num_classes=3), argv[1])
        return
    params = ms.load_checkpoint(argv[1])
    if kind == "ema":
        entries = [{"name": k, "data": v} for k, v in params.items()]
        entries += [{"name": f"ema.{k}", "data": ms.Tensor(v.asnumpy())} for k, v in params.items()]
    elif kind == "noise":
        rng = np.random.RandomState(int(argv[3]))
        scale = float(argv[4]) if len(argv) > 4 else 1e-6
        entries = []
        for k, v in params.items():
            value = v.asnumpy()
            if value.dtype == np.float32:
                value = (value * (1 + scale * rng.standard_normal(value.shape))).astype(np.float32)
            entries.append({"name": k, "data": ms.Tensor(value)})
    else:
        raise SystemExit(f"unknown kind {kind!r}: init, ema or noise")
    ms.save_checkpoint(entries, argv[2])


if __name__ == "__main__":
    main(sys.argv[1:])
