"""A saved plan applied in a script that trains with PaddleFormers' ``Trainer`` (docs/planner.md's
example): two steps of a tiny Llama, losses and parameters equal to no recompute."""

import _real_models as rm
import numpy as np
import paddle

# The Trainer imports datasets and pyarrow; the `test` extra pins versions that work beside
# numpy 1.26.4. A failing import is a failing test, not a skip.
from paddleformers.trainer import Trainer, TrainerCallback, TrainingArguments

from paddle_recompute import planner


def _dataset(n=8):
    return [{"input_ids": [(7 * k + 3 * j) % rm.VOCAB for j in range(rm.SEQ)],
             "labels": [(7 * k + 3 * j) % rm.VOCAB for j in range(rm.SEQ)]} for k in range(n)]


class _Losses(TrainerCallback):
    def __init__(self):
        self.losses = []

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and "loss" in logs:
            self.losses.append(logs["loss"])


def _train(tmp_path, plan_path=None):
    model = rm.lm("llama", dropout=0.1, layers=2)
    runs = []
    for layer in model.model.layers:  # counts MLP forwards: reruns included
        layer.mlp.forward = _counted(layer.mlp.forward, runs)
    applied = planner.Plan.load(plan_path).apply(model) if plan_path else None
    losses = _Losses()
    args = TrainingArguments(output_dir=str(tmp_path / "out"), max_steps=2, per_device_train_batch_size=2,
                             logging_steps=1, save_strategy="no", report_to=[], seed=7,
                             learning_rate=1e-2, disable_tqdm=True,
                             amp_master_grad=False)
    Trainer(model=model, args=args, train_dataset=_dataset(), callbacks=[losses]).train()
    if applied is not None:
        applied.remove()
    return losses.losses, {k: v.numpy() for k, v in model.state_dict().items()}, len(runs)


def _counted(forward, runs):
    def counted(*args, **kwargs):
        runs.append(1)
        return forward(*args, **kwargs)

    return counted


def test_trainer_with_a_saved_plan_equals_no_recompute(tmp_path):
    model = rm.lm("llama", dropout=0.1, layers=2)
    ids = paddle.to_tensor([d["input_ids"] for d in _dataset(2)], dtype="int64")
    plan = planner.plan(model, budget=0.4, input_ids=ids, labels=ids)
    assert any(c.kind != "keep" for c in plan.choices)  # something is recomputed
    plan.save(tmp_path / "plan.json")
    base_losses, base_params, base_runs = _train(tmp_path)
    losses, params, runs = _train(tmp_path, tmp_path / "plan.json")
    assert len(base_losses) == 2 and base_runs == 2 * 2  # steps x layers
    assert runs > base_runs  # the plan's regions reran
    np.testing.assert_array_equal(losses, base_losses)
    for name, value in base_params.items():
        np.testing.assert_array_equal(params[name], value, err_msg=name)
