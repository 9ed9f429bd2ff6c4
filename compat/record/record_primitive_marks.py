"""Record whether MindSpore 2.10 in PyNative mode reruns a primitive marked ``recompute()``.

    /work/msvenv/bin/python compat/record/record_primitive_marks.py \
        compat/tests/recorded/primitive_marks.json

``custom``: a ``ops.Custom`` pyfunc primitive (``y = 2x``, with its bprop) whose Python body
counts its runs, in ``y * y`` under ``ms.grad``, unmarked and marked: the runs and the gradient.
``dropout``: ``nn.Dropout(p=0.5)`` in training mode with its inner primitive marked the way
MindSpore users mark primitives (``cell.dropout.recompute()``), against the same cell unmarked,
from the same seed: the primitive's ``recompute`` attribute, the loss, the input's gradient and
the next uniform draw after the backward (a rerun drawing a new mask would move it).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def custom(ms, np, marked: bool) -> dict:
    runs = []

    def double(x):
        runs.append(1)
        return x * 2

    def bprop(x, out, dout):
        return (dout * 2,)

    prim = ms.ops.Custom(double, out_shape=lambda x: x, out_dtype=lambda x: x, func_type="pyfunc",
                         bprop=bprop)
    if marked:
        prim.recompute()

    def f(x):
        y = prim(x)
        return (y * y).sum()

    g = ms.grad(f)(ms.Tensor(np.array([1.0, -2.0, 3.0], np.float32)))
    return {"runs": len(runs), "grad": g.asnumpy().tolist()}


def dropout(ms, np, marked: bool) -> dict:
    ms.set_seed(7)
    cell = ms.nn.Dropout(p=0.5)
    cell.set_train()
    if marked:
        assert cell.dropout.recompute() is cell.dropout
    w = ms.Tensor(np.linspace(-1, 1, 32, dtype=np.float32))

    def f(x):
        return (cell(x) * w).sum()

    x = ms.Tensor(np.linspace(0.5, 2, 32, dtype=np.float32))
    loss, g = ms.value_and_grad(f)(x)
    after = ms.ops.uniform((4,), ms.Tensor(0.0), ms.Tensor(1.0))
    return {"recompute_attr": cell.dropout.attrs.get("recompute"), "loss": float(loss.asnumpy()),
            "grad": g.asnumpy().tolist(), "next_draw": after.asnumpy().tolist()}


def main(argv: list[str]) -> None:
    import mindspore as ms
    import numpy as np

    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    record = {"mindspore": ms.__version__,
              "custom": {k: custom(ms, np, k == "marked") for k in ("unmarked", "marked")},
              "dropout": {k: dropout(ms, np, k == "marked") for k in ("unmarked", "marked")}}
    Path(argv[0]).write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
