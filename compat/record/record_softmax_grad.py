"""Record MindSpore 2.10's softmax gradient after a softmax over a last axis of size 1.

    /work/msvenv/bin/python compat/record/record_softmax_grad.py \
        compat/tests/recorded/softmax_grad_after_size_one.json

Found on mindcv's mobilevit_xx_small / mobilevit_x_small (their zoo rows): at 64 px the last
stage's attention is a softmax over one patch, shape (8, 4, 1, 1), and its backward runs first.
After a softmax backward over a last axis of size 1, MindSpore's PyNative CPU backend computes
every later softmax backward *of the same rank* as ``dp * p * (1 - p)``, the row sum
``sum(dp * p)`` replaced by its own elements, for the rest of the process (other ranks, and a
process whose first softmax backward of that rank had a longer last axis, stay right).

Each sequence runs in its own process (the state is process-wide); the last call of each is
recorded: ``p``, the gradient ``dp`` arriving at the softmax output and ``dx`` at its input,
from tensor hooks, as in ``ms_cases_grad_hooks.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

# name -> the shapes whose softmax backward runs, in order (the last is recorded)
SEQUENCES = {
    "alone": [(2, 3, 5, 7)],
    "after_size_one": [(8, 4, 1, 1), (2, 3, 5, 7)],
    "after_size_one_other_rank": [(5, 1), (2, 3, 5, 7)],
    "after_size_two": [(8, 4, 2, 2), (2, 3, 5, 7)],
    "warmed_then_size_one": [(2, 3, 5, 7), (8, 4, 1, 1), (2, 3, 5, 7)],
}

# the softmax backward of one shape: MindSpore code, run by the recorder's child processes and
# by compat/tests/test_ms_softmax_grad.py under the layer
SOFTMAX_GRAD = """
def softmax_grad(shape):
    rng = np.random.default_rng(sum(shape))
    a = Tensor(rng.standard_normal(shape).astype(np.float32))
    w = Tensor(rng.standard_normal(shape).astype(np.float32))
    rec = {}
    def f(v):
        v = v * 1
        v.register_hook(lambda g: rec.__setitem__("dx", g.asnumpy()))
        p = ops.softmax(v, -1)
        p.register_hook(lambda g: rec.__setitem__("dp", g.asnumpy()))
        rec["p"] = p.asnumpy()
        return (p * w).sum()
    ms.grad(f, 0)(a)
    return rec
"""

CHILD = """
import json, sys
import numpy as np, mindspore as ms
from mindspore import ops, Tensor
ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
exec(sys.argv[2])
for shape in json.loads(sys.argv[1]):
    out = softmax_grad(tuple(shape))
print(json.dumps({k: v.tolist() for k, v in out.items()}))
"""


def main(argv: list[str]) -> None:
    import mindspore as ms

    record = {"mindspore": ms.__version__, "sequences": {}}
    for name, shapes in SEQUENCES.items():
        run = subprocess.run([sys.executable, "-c", CHILD, json.dumps(shapes), SOFTMAX_GRAD],
                             capture_output=True, text=True, check=True)
        record["sequences"][name] = {"shapes": shapes, **json.loads(run.stdout.strip().splitlines()[-1])}
    Path(argv[0]).write_text(json.dumps(record) + "\n")
    for name, seq in record["sequences"].items():
        import numpy as np

        p, dp, dx = (np.array(seq[k]) for k in ("p", "dp", "dx"))
        exact = p * (dp - (dp * p).sum(-1, keepdims=True))
        print(name, f"max |dx - softmax gradient| = {np.abs(dx - exact).max():.1e}",
              f"max |dx - dp*p*(1-p)| = {np.abs(dx - dp * p * (1 - p)).max():.1e}")


if __name__ == "__main__":
    main(sys.argv[1:])
