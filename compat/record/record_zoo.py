"""Record real MindSpore 2.10 on the mindcv 0.3.0 zoo (compat/zoo_case.py), one JSON per model.

    /work/msvenv/bin/python compat/record/record_zoo.py [--first-per-family] [--limit-s=S] [--recompute]
        [NAME ...]
    /work/msvenv/bin/python compat/record/record_zoo.py --help

Writes ``compat/tests/recorded/zoo/<model>.json``: family, input size, parameter table,
initial weight scales, eval logits, two training losses, and the noise floor: the largest
difference MindSpore shows against itself over two draws of 1e-6 relative weight noise.
Models already recorded are skipped (the run resumes). A model MindSpore cannot build is
recorded with its error, and so is one that takes over ``--limit-s`` seconds (900 by default; a
TimeoutError record is withdrawn by deleting it, so a later run retries it, with a longer limit
on a less loaded machine). Order: one model per family first, then the rest.

``--recompute`` records with MindSpore's own ``Cell.recompute()`` on the model's repeated blocks
(``zoo_case.repeated_blocks``), for a model whose activations do not fit in memory otherwise
(cait_m48_448). MindSpore's recomputation gives the same numbers, bit for bit: checked with
``rerecord_check.py --recompute`` against records made without it. The record says so
(``ms_recompute_blocks``).
"""

from __future__ import annotations

import json
import signal
import sys
import time
import traceback
from pathlib import Path

import mindspore as ms
import numpy as np
from mindcv.models import registry

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import zoo_case  # noqa: E402

OUT = HERE.parent / "tests" / "recorded" / "zoo"
# Tried first, smallest first; then the model's own input size, then the common ones. 96 and 128
# serve models that 64 pixels shrink to nothing but that need no fixed size (inception_v4: its
# valid convolutions need 75 pixels; its own 299 cost about ten times the arithmetic of 96).
SIZES = (64, 96, 128)
COMMON_SIZES = (224, 256, 299, 384)  # a model may need one its config does not name (swinv2: 256)
NOISE_SEEDS = (1, 2)
LIMIT_S = 900
PROTOCOL = 2  # 2: dropout and stochastic depth off (zoo_case.no_dropout)


def family(name):
    return registry._model_to_module[name]


_SMALL = ("nano", "tiny", "xxs", "xs", "mini", "small", "_s", "050", "075", "100", "18", "b0", "_a0", "ti")


def smallness(name):
    """A sort key putting a family's small models first (by name: there is no size before a build)."""
    hits = [i for i, token in enumerate(_SMALL) if token in name.lower()]
    return (min(hits) if hits else len(_SMALL), len(name), name)


def ordered(names):
    first, seen = [], set()
    for name in sorted(names, key=smallness):
        if family(name) not in seen:
            seen.add(family(name))
            first.append(name)
    return first + sorted((n for n in names if n not in first), key=smallness)


def pick_size(name, model, scales):
    """The smallest size whose eval and training forwards run (a training forward may need more:
    inception_v3's auxiliary head needs its own 299 pixels). If none does, the error at the
    model's own size is raised."""
    errors = {}
    for size in dict.fromkeys((*SIZES, zoo_case.own_size(name), *COMMON_SIZES)):
        try:
            zoo_case.reset(*model, scales)
            zoo_case.forward(model[0], size)
            model[0].set_train(True)
            model[0](ms.Tensor(zoo_case.images(size)))
            return size
        except Exception:  # noqa: BLE001 - the next size is tried
            errors[size] = traceback.format_exc()
    raise RuntimeError(errors[zoo_case.own_size(name)])


def record(name, recompute=False):
    entry = {"model": name, "family": family(name), "mindspore": ms.__version__, "protocol": PROTOCOL}
    model = zoo_case.prepare(name)
    net, fixed = model
    if recompute:
        blocks = zoo_case.repeated_blocks(net)
        for block in blocks:
            block.recompute()
        entry["ms_recompute_blocks"] = len(blocks)
    entry["params"] = zoo_case.param_table(net)
    entry["scales"] = scales = zoo_case.init_scales(net)
    entry["fixed_sum"] = float(sum(np.abs(v.astype(np.float64)).sum() for v in fixed.values()))
    entry["size"] = pick_size(name, model, scales)
    clean = run(model, entry["size"], scales)
    entry["forward"] = clean["forward"].astype(np.float64).tolist()
    entry["losses"] = clean["losses"]
    entry["train_logits"] = clean["train_logits"].astype(np.float64).tolist()
    fwd_floor, step_floor, train_floor = 0.0, [0.0, 0.0], 0.0
    for seed in NOISE_SEEDS:
        noisy = run(model, entry["size"], scales, noise_seed=seed)
        fwd_floor = max(fwd_floor, float(np.abs(noisy["forward"] - clean["forward"]).max()))
        pairs = zip(step_floor, noisy["losses"], clean["losses"], strict=True)
        step_floor = [max(f, abs(a - b)) for f, a, b in pairs]
        train_floor = max(train_floor, float(np.abs(noisy["train_logits"] - clean["train_logits"]).max()))
    entry["floor"] = {"forward": fwd_floor, "losses": step_floor, "train_logits": train_floor}
    zoo_case.reset(net, fixed, scales)  # after training: the reset must give a fresh build's state back
    entry["eval_repeat_equal"] = bool(np.array_equal(zoo_case.forward(net, entry["size"]), clean["forward"]))
    return entry


def run(model, size, scales, noise_seed=None):
    """``zoo_case.run``, then what MindSpore compiled for the run let go.

    Each run builds its own optimizer, and MindSpore 2.10 keeps what it compiled for it, and the
    optimizer's moments with it, until the process ends (found by counting live Parameters: 185
    more after each run on convnext_tiny, held from C++). ``ms_memory_recycle`` lets them go:
    convnext_small's recording peak went from 2.86 GB to 2.02 (58 to 41 bytes a parameter). The
    recycling also forgets the softmax warm-up (mobilevit_xx_small's floor changed without the
    second warm-up), so it runs again. ``rerecord_check.py`` gives every field of the committed
    records back (12 models of 11 families checked)."""
    result = zoo_case.run(model, size, scales, noise_seed)
    ms.ms_memory_recycle()
    warm_softmax_backward()
    return result


def _alarm(limit_s):
    def handler(signum, frame):
        raise TimeoutError(f"recording took over {limit_s} s")

    return handler


def warm_softmax_backward(ranks=range(1, 9)):
    """One softmax backward per rank over a last axis of 2, before any model.

    MindSpore 2.10's CPU backend computes every softmax backward of a rank as ``dp*p*(1-p)`` once
    the process's first softmax backward of that rank ran over a last axis of size 1 (recorded:
    compat/record/record_softmax_grad.py). At 64 px mobilevit's last attention is over one patch,
    and its backward runs first, so mobilevit's own step, and every later model's in the same
    process, got that gradient. After a first backward over a longer axis MindSpore stays right."""
    for rank in ranks:
        shape = (2,) * rank
        weight = ms.Tensor(np.arange(2**rank, dtype=np.float32).reshape(shape))
        ms.grad(_weighted_softmax, 0)(ms.Tensor(np.ones(shape, np.float32)), weight)


def _weighted_softmax(v, weight):
    return (ms.ops.softmax(v * 1, -1) * weight).sum()


def start_mindspore():
    """A recording process's MindSpore: PyNative on the CPU, the softmax backward warmed up
    before any model (``rerecord_check.py`` starts the same way, so that it reproduces)."""
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    warm_softmax_backward()


OPTIONS = ("--first-per-family", "--limit-s=", "--recompute")


def main(argv):
    if "--help" in argv or "-h" in argv:
        print(__doc__)
        return
    unknown = [a for a in argv if a.startswith("-") and not a.startswith(OPTIONS)]
    if unknown:  # an unknown option must not start a whole-zoo recording
        raise SystemExit(f"record_zoo.py: unknown option(s) {unknown}; the options are {OPTIONS}")
    start_mindspore()
    OUT.mkdir(parents=True, exist_ok=True)
    given = [a for a in argv if not a.startswith("--")]
    limits = [int(a.split("=", 1)[1]) for a in argv if a.startswith("--limit-s=")]
    limit_s = limits[-1] if limits else LIMIT_S
    names = ordered(registry.list_models())
    if "--first-per-family" in argv:
        names = names[: len({family(n) for n in names})]
    signal.signal(signal.SIGALRM, _alarm(limit_s))
    for name in given or names:  # names given: in their order
        path = OUT / f"{name}.json"
        if path.exists():
            continue
        start = time.time()
        signal.alarm(limit_s)
        try:
            entry = record(name, recompute="--recompute" in argv)
        except Exception as error:  # noqa: BLE001 - MindSpore's own failure is the record
            entry = {
                "model": name,
                "family": family(name),
                "mindspore": ms.__version__,
                "error": f"{type(error).__name__}: {str(error).strip().splitlines()[-1][:300]}",
            }
        finally:
            signal.alarm(0)
        entry["record_s"] = round(time.time() - start, 1)
        path.write_text(json.dumps(entry) + "\n")
        print(name, entry.get("size"), entry.get("error", "ok"), entry["record_s"], flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
