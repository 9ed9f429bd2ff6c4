"""Run mindcv's own train.py and validate.py (compat/mindcv_scripts/, unmodified) and read
back what they wrote. Shared by the recorder (``record_mindcv_script.py``, the commands under
real MindSpore 2.10) and ``compat/tests/test_ms_mindcv_train_script.py`` (the same commands
under ``paddle-mindspore``).

The reading side uses the layer's ``load_checkpoint`` and summary reader (both read MindSpore's
own files; tested against recordings), so it runs in the project's environment either way.
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import numpy as np

COMPAT = Path(__file__).resolve().parents[1]
SCRIPTS = COMPAT / "mindcv_scripts"
CKPT_TOOL = COMPAT / "record" / "mindcv_script_ckpt.py"
MODEL = "shufflenet_v2_x0_5"
EPOCHS, STEPS = 2, 3  # tiny.yaml: 24 training images, batch 8
# the final weights the recording keeps in full (the rest: one abs-sum per entry)
KEPT = ("classifier.weight",)  # shufflenet_v2 has no classifier bias
# --ema without validation: with --val_while_train, mindcv's StateMonitor loads its EMA weights
# with ``load_param_into_net(net, {name: param.data})``, which MindSpore 2.10 refuses (TypeError:
# Tensors, not Parameters), so that combination stops in MindSpore itself.
EXTRA = {"plain": [], "ema": ["--ema", "True", "--ema_decay", "0.9", "--val_while_train", "False"]}

_STEP = re.compile(r"loss: ([0-9.]+), lr: ([0-9.]+)")
_VAL = re.compile(r"Validation Top_1_Accuracy: ([0-9.]+)%")


def run(command: list[str], cwd: Path, timeout: float = 600) -> str:
    """``command``'s stdout; a failure raises with the end of its output."""
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{command} exited {done.returncode}:\n{(done.stdout + done.stderr)[-4000:]}")
    return done.stdout


def train_args(data: Path, init: Path, out: str, kind: str) -> list[str]:
    """train.py's command line (after the interpreter): the tiny recipe, from ``init``. ``out``
    is relative to the working directory: train.py writes its summary to
    ``f"./{ckpt_save_dir}/summary"``, under the working directory even for an absolute path."""
    return [str(SCRIPTS / "train.py"), "-c", str(SCRIPTS / "tiny.yaml"), "--data_dir", str(data),
            "--ckpt_path", str(init), "--ckpt_save_dir", out, "--val_while_train", "True", *EXTRA[kind]]


def validate_args(data: Path, ckpt: Path) -> list[str]:
    return [str(SCRIPTS / "validate.py"), "-c", str(SCRIPTS / "tiny.yaml"), "--data_dir", str(data),
            "--ckpt_path", str(ckpt)]


def read_validate(stdout: str) -> dict:
    """validate.py prints ``model.eval``'s dict last."""
    return ast.literal_eval(stdout.strip().splitlines()[-1])


def final_weights(ckpt: Path) -> dict:
    """The kept entries in full, every entry's abs-sum (float64)."""
    from paddle_mindspore import load_checkpoint

    params = {k: np.asarray(v.numpy(), np.float64) for k, v in load_checkpoint(str(ckpt)).items()}
    return {"kept": {k: params[k].ravel().tolist() for k in KEPT},
            "abs_sum": {k: float(np.abs(v).sum()) for k, v in params.items()}}


def read_train(out: Path) -> dict:
    """What train.py wrote to ``out``: the logged step losses and rates (6 decimals), validation
    accuracies, the summary's epoch losses (float32 in full), file names, final weights."""
    from paddle_mindspore.train.summary import read_events

    log = (out / "rank0.log").read_text()
    steps = _STEP.findall(log)
    (events_file,) = (out / "summary").iterdir()
    summary = {str(e.step): {v.tag: v.scalar_value for v in e.summary.value}
               for e in read_events(str(events_file))[1:]}
    return {
        "step_loss": [float(loss) for loss, _ in steps],
        "step_lr": [float(lr) for _, lr in steps],
        "val_accuracy": [float(a) for a in _VAL.findall(log)],
        "summary": summary,
        "files": sorted(p.name for p in out.iterdir() if p.is_file()),
        "result_rows": len((out / "result.log").read_text().splitlines()),
        "final": final_weights(out / f"{MODEL}-{EPOCHS}_{STEPS}.ckpt"),
    }
