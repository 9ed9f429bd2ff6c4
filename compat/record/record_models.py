"""Record real MindSpore's numbers for the GPT and LeNet programs (run with MindSpore 2.10 installed).

    python compat/record/record_models.py compat/tests/data

For each program: initial weights drawn by a fixed numpy recipe keyed by MindSpore parameter
name (``<prog>_weights.npz``), then with those weights, dropout off, in training mode:
the first step's loss, output and the gradient of every trainable parameter, the losses of a
few training steps run by the program's own ``train`` and every parameter after them, with
``recompute`` (``out0``, ``grad/<name>``, ``after/<name>``); the first loss and the losses with
and without it (``recompute/...``, ``plain/...``) and the parameters that end differently
without it (``plain/after/<name>``: BatchNorm moving statistics, which MindSpore PyNative
updates a second time when it recomputes), in ``<prog>_reference.npz``; provenance in
``<prog>_reference.json``.
"""
from __future__ import annotations

import importlib.util
import json
import platform
import sys
from pathlib import Path

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

ORIGINALS = Path(__file__).resolve().parents[1] / "mindspore_originals" / "models"
STEPS = 3


def load_program(name):
    spec = importlib.util.spec_from_file_location(name, ORIGINALS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def recipe(net, seed=0):
    """Initial weights: one RandomState, parameters in ``parameters_and_names`` order."""
    rng = np.random.RandomState(seed)
    weights = {}
    for name, param in net.parameters_and_names():
        shape = tuple(param.shape)
        noise = rng.standard_normal(shape)
        if name.endswith(("gamma", "moving_variance")):
            value = 1.0 + 0.1 * np.abs(noise) if name.endswith("moving_variance") else 1.0 + 0.1 * noise
        elif name.endswith(("beta", "bias", "moving_mean")):
            value = 0.1 * noise
        elif name.endswith("embedding_table"):
            value = 0.5 * noise
        else:  # weights: (out, in, ...)
            value = noise / np.sqrt(np.prod(shape[1:]))
        weights[name] = value.astype(np.float32)
    return weights


def set_weights(net, weights):
    for name, param in net.parameters_and_names():
        param.set_data(Tensor(weights[name]))


def gpt_first_step(prog, net, batch):
    loss_fn = nn.CrossEntropyLoss()
    params = net.trainable_params()

    def forward_fn(idx, targets):
        logits = net(idx)
        return loss_fn(logits.view(-1, logits.shape[-1]), targets.view(-1)), logits

    net.set_train()
    (loss, logits), grads = ms.value_and_grad(forward_fn, None, params, has_aux=True)(*batch)
    return loss, logits, dict(zip([p.name for p in params], grads, strict=True))


def lenet_first_step(prog, net, batch):
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    params = net.trainable_params()

    def forward_fn(images, labels):
        logits = net(images)
        return loss_fn(logits, labels), logits

    net.set_train()
    (loss, logits), grads = ms.value_and_grad(forward_fn, None, params, has_aux=True)(*batch)
    return loss, logits, dict(zip([p.name for p in params], grads, strict=True))


PROGRAMS = {
    "e_gpt": ("e_gpt_recompute", lambda prog, rc: prog.GPT(recompute=rc),
              lambda prog, net: prog.make_batches(64, 4, net.block_size, 2), gpt_first_step),
    "f_lenet": ("f_lenet_train_one_step", lambda prog, rc: prog.LeNet5(recompute=rc),
                lambda prog, net: prog.make_batches(8, 2), lenet_first_step),
}


def record(key, out_dir):
    module_name, build, batches_of, first_step = PROGRAMS[key]
    prog = load_program(module_name)
    ms.set_seed(0)
    weights = recipe(build(prog, True))
    np.savez(out_dir / f"{key}_weights.npz", **weights)
    ref = {}
    for recompute in (True, False):
        tag = "recompute" if recompute else "plain"
        net = build(prog, recompute)
        set_weights(net, weights)
        batches = batches_of(prog, net)
        loss, out, grads = first_step(prog, net, batches[0])
        ref[f"{tag}/loss0"] = loss.asnumpy()
        net = build(prog, recompute)
        set_weights(net, weights)
        ref[f"{tag}/losses"] = np.array(prog.train(net, batches_of(prog, net), STEPS), np.float64)
        after = {n: p.asnumpy() for n, p in net.parameters_and_names()}
        if recompute:  # the full record
            ref["out0"] = out.asnumpy()
            ref.update({f"grad/{n}": g.asnumpy() for n, g in grads.items()})
            ref.update({f"after/{n}": v for n, v in after.items()})
        else:  # only what differs: MindSpore updates BatchNorm statistics again when it recomputes
            ref.update({f"plain/after/{n}": v for n, v in after.items()
                        if not np.array_equal(v, ref[f"after/{n}"])})
    np.savez(out_dir / f"{key}_reference.npz", **ref)
    meta = {
        "program": f"compat/mindspore_originals/models/{module_name}.py", "steps": STEPS,
        "mindspore": ms.__version__, "numpy": np.__version__, "python": platform.python_version(),
        "mode": "PYNATIVE_MODE, CPU", "command": "python compat/record/record_models.py compat/tests/data",
        "parameter_names": [n for n, _ in build(prog, True).parameters_and_names()],
        "losses_recompute": ref["recompute/losses"].tolist(), "losses_plain": ref["plain/losses"].tolist(),
        "differ_without_recompute": sorted(k.removeprefix("plain/after/") for k in ref
                                           if k.startswith("plain/after/")),
    }
    (out_dir / f"{key}_reference.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(key, "losses", meta["losses_recompute"], meta["losses_plain"])


def main(argv):
    out_dir = Path(argv[0] if argv else "compat/tests/data")
    out_dir.mkdir(parents=True, exist_ok=True)
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    for key in PROGRAMS:
        record(key, out_dir)


if __name__ == "__main__":
    main(sys.argv[1:])
