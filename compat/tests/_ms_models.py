"""The GPT and LeNet programs of compat/ and MindSpore 2.10's record of them (recorded/).

``compat/record/record_models.py`` ran the unmodified originals under real MindSpore with the
weights of ``<key>_weights.npz``; :func:`first_step` and :func:`trained` run the ports the same
way here.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from typing import Any

import numpy as np
from _ms_helpers import COMPAT

import paddle_mindspore as ms

RECORDED = COMPAT / "tests" / "recorded"


@dataclass(frozen=True)
class Program:
    key: str
    module: str
    loss: Any  # () -> the loss cell the recorder used for the first step
    flat: bool  # logits and targets flattened to (N, C) / (N,), as the GPT's forward_fn does
    imports: str  # what the program imports from mindspore

    def load(self) -> Any:
        spec = importlib.util.spec_from_file_location("compat_" + self.module, COMPAT / f"{self.module}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    def build(self, prog: Any, recompute: bool, dropout: float = 0.0) -> Any:
        if self.key == "e_gpt":
            return prog.GPT(recompute=recompute, dropout=dropout)
        return prog.LeNet5(recompute=recompute)

    def batches(self, prog: Any, net: Any) -> list:
        if self.key == "e_gpt":
            return prog.make_batches(64, 4, net.block_size, 2)
        return prog.make_batches(8, 2)

    @property
    def weights(self) -> str:
        return str(RECORDED / f"{self.key}_weights.npz")

    def reference(self) -> Any:
        return np.load(RECORDED / f"{self.key}_reference.npz")

    def meta(self) -> dict:
        return json.loads((RECORDED / f"{self.key}_reference.json").read_text())


PROGRAMS = {
    "e_gpt": Program("e_gpt", "e_gpt_recompute", lambda: ms.nn.CrossEntropyLoss(), True, "nn, ops, Tensor"),
    "f_lenet": Program("f_lenet", "f_lenet_train_one_step",
                       lambda: ms.nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"), False,
                       "nn, Tensor"),
}


def loaded(program: Program, prog: Any, recompute: bool, dropout: float = 0.0) -> Any:
    """A fresh network of the program with the recorded initial weights."""
    net = program.build(prog, recompute, dropout)
    prog.load_weights(net, program.weights)
    return net


def first_step(program: Program, prog: Any, net: Any) -> tuple:
    """``(loss, output, {name: gradient})`` of the first batch, in training mode."""
    loss_fn = program.loss()
    params = net.trainable_params()

    def forward_fn(x, y):
        out = net(x)
        if program.flat:
            return loss_fn(out.view(-1, out.shape[-1]), y.view(-1)), out
        return loss_fn(out, y), out

    net.set_train()
    grad_fn = ms.value_and_grad(forward_fn, None, params, has_aux=True)
    (loss, out), grads = grad_fn(*program.batches(prog, net)[0])
    return loss, out, dict(zip([p.name for p in params], grads, strict=True))


def trained(program: Program, prog: Any, recompute: bool, steps: int = 3, dropout: float = 0.0,
            seed: int = 0) -> tuple[list, dict]:
    """Losses of ``steps`` steps of the program's own ``train``, and every parameter after them."""
    ms.set_seed(seed)
    net = loaded(program, prog, recompute, dropout)
    losses = prog.train(net, program.batches(prog, net), steps)
    return losses, {n: p.asnumpy() for n, p in net.parameters_and_names()}
