"""Record real MindSpore 2.10's BatchNorm arithmetic on the CPU, and mindcv's ResNet-18 over
four training steps with its noise floor.

    /work/msvenv/bin/python compat/record/record_batchnorm.py compat/tests/recorded/batchnorm.json

``cases``: ``nn.BatchNorm2d`` / ``nn.BatchNorm1d`` on small inputs drawn here (the inputs are in
the record): the training forward, the moving statistics after it, the gradients of
``sum(out * dout)`` for the input, ``gamma`` and ``beta``, and the inference forward with the
moved statistics. One case holds channels whose mean is far above their spread (where the
order of the arithmetic shows most).

``resnet18``: mindcv's ``resnet18`` through compat/zoo_case.py (weights drawn by parameter name
at the scales MindSpore's initialisation gave, recorded in ``zoo/resnet18.json``), four
training steps at 64 pixels: losses and the last step's training logits; and the noise floor,
the largest difference from that run over four runs with every trainable weight scaled by
``1 + 1e-6 * N(0, 1)`` (noise seeds 1-4).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mindspore as ms
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from record_zoo import start_mindspore  # noqa: E402

import zoo_case  # noqa: E402

ZOO = HERE.parent / "tests" / "recorded" / "zoo"
STEPS = 4
NOISE_SEEDS = (1, 2, 3, 4)
# name -> (shape, channel mean, channel spread, momentum)
CASES = {
    "bn2d": ((4, 3, 5, 5), 0.0, 1.0, 0.9),
    "bn2d_offset": ((2, 4, 3, 3), 40.0, 0.05, 0.9),
    "bn2d_momentum": ((3, 2, 4, 4), 0.5, 2.0, 0.7),
    "bn1d": ((8, 6), 1.0, 0.5, 0.9),
}


def draw(shape, mean, spread, seed):
    rng = np.random.default_rng(seed)
    channels = shape[1]
    x = rng.standard_normal(shape) * spread + mean + rng.standard_normal(channels).reshape(
        (1, channels) + (1,) * (len(shape) - 2)) * spread
    return {"x": x.astype(np.float32), "dout": rng.standard_normal(shape).astype(np.float32),
            "gamma": (1 + 0.2 * rng.standard_normal(channels)).astype(np.float32),
            "beta": (0.1 * rng.standard_normal(channels)).astype(np.float32),
            "moving_mean": (0.1 * rng.standard_normal(channels)).astype(np.float32),
            "moving_variance": (1 + 0.1 * rng.random(channels)).astype(np.float32)}


def bn_case(shape, mean, spread, momentum, seed):
    data = draw(shape, mean, spread, seed)
    cell_type = ms.nn.BatchNorm2d if len(shape) == 4 else ms.nn.BatchNorm1d
    cell = cell_type(shape[1], momentum=momentum)
    for name in ("gamma", "beta", "moving_mean", "moving_variance"):
        getattr(cell, name).set_data(ms.Tensor(data[name]))
    cell.set_train(True)
    dout = ms.Tensor(data["dout"])

    def loss(x):
        out = cell(x)
        return (out * dout).sum(), out

    grad_fn = ms.value_and_grad(loss, 0, cell.trainable_params(), has_aux=True)
    (_, out), (dx, (dgamma, dbeta)) = grad_fn(ms.Tensor(data["x"]))
    result = {"out": out, "dx": dx, "dgamma": dgamma, "dbeta": dbeta,
              "moved_mean": cell.moving_mean.value(), "moved_variance": cell.moving_variance.value()}
    cell.set_train(False)
    result["eval_out"] = cell(ms.Tensor(data["x"]))
    return {"shape": list(shape), "momentum": momentum,
            **{k: v.ravel().tolist() for k, v in data.items()},
            **{k: v.asnumpy().ravel().astype(np.float64).tolist() for k, v in result.items()}}


def resnet18():
    rec = json.loads((ZOO / "resnet18.json").read_text())
    model, scales, size = zoo_case.prepare("resnet18"), rec["scales"], rec["size"]

    def run(noise_seed=None):
        zoo_case.reset(*model, scales, noise_seed)
        losses, logits = zoo_case.train(model[0], size, steps=STEPS)
        ms.ms_memory_recycle()
        return np.array(losses, np.float64), logits.astype(np.float64)

    losses, logits = run()
    noisy = [run(seed) for seed in NOISE_SEEDS]
    return {"size": size, "steps": STEPS, "noise_seeds": list(NOISE_SEEDS),
            "losses": losses.tolist(), "train_logits": logits.tolist(),
            "floor": {"losses": np.max([np.abs(n[0] - losses) for n in noisy], axis=0).tolist(),
                      "train_logits": float(max(np.abs(n[1] - logits).max() for n in noisy))}}


def main(argv):
    out = Path(argv[0] if argv else "compat/tests/recorded/batchnorm.json")
    start_mindspore()
    record = {"mindspore": ms.__version__,
              "cases": {name: bn_case(*spec, seed=i) for i, (name, spec) in enumerate(CASES.items())},
              "resnet18": resnet18()}
    out.write_text(json.dumps(record) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
