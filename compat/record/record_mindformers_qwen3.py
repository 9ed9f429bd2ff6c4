"""Record real MindSpore 2.10 running compat/mindformers_scripts/qwen3_train.py (mindformers
2.1.0's Qwen3 on its training-graph path, ``TrainingQwen3ForCausalLM``, unmodified) on the CPU in
GRAPH_MODE, for compat/tests/test_ms_mindformers_qwen3.py.

    /work/msvenv/bin/python compat/record/record_mindformers_qwen3.py compat/tests/recorded/mindformers_qwen3

MindSpore 2.10's CPU build builds this network but has no CPU kernel for three primitives it
runs forward (``RmsNorm``, ``Outer``, ``FlashAttentionScore``) and none for the backward of the
embedding lookup (``EmbeddingDenseBackward``). Each run therefore goes through
compat/record/qwen3_cpu_compositions.py, which replaces those four, and only those, by
compositions of MindSpore CPU ops that compute what the primitives' documentation says:

- ``RmsNorm(eps)(x, gamma)``: ``x * rsqrt(mean(x * x, -1) + eps) * gamma`` (and ``rstd``);
- ``Outer(x, y)``: ``x[:, None] * y[None, :]`` (the same numbers);
- ``FlashAttentionScore`` (layout ``BNSD``, ``sparse_mode`` 0, no dropout): ``softmax(q k^T *
  scale_value)`` with the mask's 1s excluded (score set to float32's lowest), times ``v``;
- the embedding lookup (``mint.nn.functional.embedding`` in ``VocabParallelEmbedding``'s
  ``Morph``): ``Gather`` of the rows (the same numbers forward; its gradient sums the same rows).

So the ground truth is MindSpore's arithmetic with these as compositions. Everything else runs as
MindSpore runs it (GRAPH_MODE: ``Morph`` runs only there).

Writes ``init.npz`` (the network's initial weights by parameter name, as MindSpore drew them),
``grads.npz`` (the script's ``--grads`` dump of the ``all`` run: the first step's gradient of every
trained parameter, ``grad/<name>``, and every parameter after the last step, ``param/<name>``;
compressed) and ``run.json``: the parameter names and shapes; four steps' losses from
``init.npz`` for each recompute variant of the script (``none``, ``full``, ``select``, ``comm``,
``all``) and the largest difference of each variant's dump from the ``all`` one
(``grads_change``); the noise floor: the largest difference from the ``all`` losses over four
runs with every weight scaled by ``1 + 1e-6 * N(0, 1)`` (noise seeds 1-4) and one run with each
batch's rows reversed, and ``grads_floor``, the same per entry of the dump
(compat/record/mindformers_grads.py); and,
per variant, the cells and primitives mindformers marks for recompute while it builds the
network (compat/record/mindformers_recompute_marks.py). Each training run is a subprocess, as a
user runs the script.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import mindformers_grads as mg  # noqa: E402

SCRIPT = HERE.parent / "mindformers_scripts" / "qwen3_train.py"
COMPOSED = HERE / "qwen3_cpu_compositions.py"
STEPS = 4
NOISE_SEEDS = (1, 2, 3, 4)
VARIANTS = ("none", "full", "select", "comm", "all")


def run(tmp: Path, *args: str) -> dict:
    out = tmp / "out.json"
    command = [sys.executable, str(COMPOSED), str(SCRIPT), "--steps", str(STEPS), "--out", str(out),
               *args]
    subprocess.run(command, check=True, cwd=tmp, capture_output=True, text=True)
    return json.loads(out.read_text())


def recompute_marks() -> dict:
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(SCRIPT.parent))
    import qwen3_train
    from mindformers import build_context
    from mindformers_recompute_marks import marks

    build_context({"use_legacy": False, "parallel": {},
                   "context": {"mode": "GRAPH_MODE", "device_target": "CPU"}})
    result = {}
    for variant in VARIANTS:
        found = marks(qwen3_train.build, variant)
        result[variant] = {"counts": found["counts"], "marks": found["marks"]}
    return result


def main(argv):
    dest = Path(argv[0] if argv else "compat/tests/recorded/mindformers_qwen3").resolve()
    dest.mkdir(parents=True, exist_ok=True)
    init = dest / "init.npz"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        drawn = run(tmp, "--steps", "0", "--save-init", str(init))
        by_variant = {v: run(tmp, "--init", str(init), "--recompute", v, "--grads", str(tmp / f"{v}.npz"))
                      for v in VARIANTS}
        noisy, dumps = mg.noise_runs(run, tmp, init, NOISE_SEEDS)  # the script's default: all
        dump = mg.load(tmp / "all.npz")
        grads_floor = mg.floor(dump, mg.initial_weights(init), dumps)
        change = {v: mg.largest_difference(mg.load(tmp / f"{v}.npz"), dump) for v in VARIANTS}
        np.savez_compressed(dest / "grads.npz", **dump)
        cwd = os.getcwd()
        os.chdir(tmp)  # mindformers writes its log folder (output/) into the working directory
        try:
            marks = recompute_marks()
        finally:
            os.chdir(cwd)
    import mindspore

    losses = np.array(by_variant["all"]["losses"])
    floor = np.max([np.abs(np.array(n) - losses) for n in noisy], axis=0)
    record = {
        "mindspore": mindspore.__version__,
        "steps": STEPS,
        "noise_seeds": list(NOISE_SEEDS), "reversed_batch_in_floor": True,
        "composed": ["RmsNorm", "Outer", "FlashAttentionScore", "embedding (EmbeddingDenseBackward)"],
        "params": drawn["params"],
        "losses": {v: r["losses"] for v, r in by_variant.items()},
        "floor": floor.tolist(),
        "grads_change": change, "grads_floor": grads_floor,
        "recompute_marks": marks,
    }
    for v, r in by_variant.items():
        if r["params"] != drawn["params"]:
            raise RuntimeError(f"qwen3_train.py --recompute {v}: other parameters than the drawn ones")
    (dest / "run.json").write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
