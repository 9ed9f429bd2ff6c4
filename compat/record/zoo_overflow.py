"""Where a zoo model's training steps overflow float32: a diagnostic that runs in either framework.

    /work/msvenv/bin/python compat/record/zoo_overflow.py NAME [SEED ...]             # MindSpore
    paddle-mindspore compat/record/zoo_overflow.py NAME [SEED ...]  # the layer

For the recorded model NAME (compat/tests/recorded/zoo/), built and filled as compat/zoo.py
does, with its weights as recorded and then under each SEED's 1e-6 relative weight noise, it
prints the two training losses, the largest step logit and, per step, how many ``nn.BatchNorm2d``
inputs hold inf or NaN and the largest finite input (``construct`` is wrapped alike in both
frameworks). It gave the numbers of resnest200's and resnest269's rows (``WHY`` in compat/zoo.py).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mindspore as ms
import numpy as np
from mindspore import nn

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import record_zoo  # noqa: E402

import zoo_case  # noqa: E402

CALLS: list[tuple[int, float]] = []


def _watch(construct):
    def watched(self, x):
        a = x.asnumpy()
        finite = np.isfinite(a)
        CALLS.append((int((~finite).sum()), float(np.abs(a[finite]).max()) if finite.any() else float("nan")))
        return construct(self, x)

    return watched


def report(name, rec, model, seed):
    zoo_case.reset(*model, rec["scales"], seed)
    CALLS.clear()
    losses, logits = zoo_case.train(model[0], rec["size"])
    print(f"{name} noise seed {seed}: losses {losses}, largest step logit {np.abs(logits).max():.3g}")
    for step, calls in enumerate(np.array_split(np.array(CALLS, dtype=float), 2), 1):
        bad = int((calls[:, 0] > 0).sum())
        largest = np.nanmax(calls[:, 1])
        print(f"  step {step}: {len(calls)} BatchNorm2d calls, {bad} with inf or NaN inputs "
              f"({int(calls[:, 0].sum())} values), largest finite input {largest:.3g}", flush=True)


def main(argv):
    if not argv or argv[0].startswith("-"):
        raise SystemExit(__doc__)
    name, seeds = argv[0], [None] + [int(s) for s in argv[1:]]
    ms.set_context(mode=ms.PYNATIVE_MODE)
    record_zoo.warm_softmax_backward()  # as the recorder does, before any model
    nn.BatchNorm2d.construct = _watch(nn.BatchNorm2d.construct)
    rec = json.loads((record_zoo.OUT / f"{name}.json").read_text())
    model = zoo_case.prepare(name)
    for seed in seeds:
        report(name, rec, model, seed)


if __name__ == "__main__":
    main(sys.argv[1:])
