"""``mindspore.train``: metrics against MindSpore 2.10's values, callbacks, ``ModelCheckpoint``
files, errors, and recompute running inside ``Model.train``."""

from __future__ import annotations

import importlib.util
import json
import os

import numpy as np
import paddle
import pytest
from _ms_helpers import COMPAT

import paddle_mindspore as ms
import paddle_recompute
from paddle_mindspore import nn
from paddle_mindspore.dataset import NumpySlicesDataset
from paddle_mindspore.train import (
    Accuracy,
    Callback,
    CheckpointConfig,
    Loss,
    LossMonitor,
    Model,
    ModelCheckpoint,
    Precision,
    Recall,
    Top1CategoricalAccuracy,
    Top5CategoricalAccuracy,
)

METRICS = json.loads((COMPAT / "tests" / "recorded" / "metrics.json").read_text())


def _inputs():
    spec = importlib.util.spec_from_file_location("metric_inputs", COMPAT / "record" / "metric_inputs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


INPUTS = _inputs()
MAKERS = {
    "accuracy": Accuracy,
    "top1": Top1CategoricalAccuracy,
    "top5": Top5CategoricalAccuracy,
    "precision": Precision,
    "recall": Recall,
}


def _metric(make, batches, one_hot=False, average=None):
    metric = make()
    for logits, labels in batches:
        y = np.eye(logits.shape[1], dtype=np.int32)[labels] if one_hot else labels
        metric.update(ms.Tensor(logits), ms.Tensor(y))
    value = metric.eval() if average is None else metric.eval(average=average)
    return np.asarray(value, np.float64).tolist()


@pytest.mark.parametrize("name", sorted(MAKERS))
@pytest.mark.parametrize("one_hot", [False, True])
def test_metrics_equal_mindspores(name, one_hot):
    expected = METRICS[name + ("_onehot" if one_hot else "")]
    np.testing.assert_array_equal(_metric(MAKERS[name], INPUTS.inputs(), one_hot), expected)


def test_averaged_multilabel_and_loss_metrics_equal_mindspores():
    for name, make in (("precision", Precision), ("recall", Recall)):
        np.testing.assert_array_equal(
            _metric(make, INPUTS.inputs(), average=True), METRICS[name + "_average"]
        )
        np.testing.assert_array_equal(
            _metric(lambda m=make: m("multilabel"), INPUTS.multilabel()), METRICS[name + "_multilabel"]
        )
    np.testing.assert_array_equal(
        _metric(lambda: Accuracy("multilabel"), INPUTS.multilabel()), METRICS["accuracy_multilabel"]
    )
    loss = Loss()
    loss.update(ms.Tensor(np.array([1.5, 2.5], np.float32)))
    loss.update(ms.Tensor(np.float32(0.25)))
    assert loss.eval() == METRICS["loss"]


class _Net(nn.Cell):
    def __init__(self, recompute=False):
        super().__init__()
        self.hidden = nn.SequentialCell(nn.Dense(4, 8), nn.ReLU())
        self.out = nn.Dense(8, 3)
        self.calls = 0
        self.hidden.register_forward_post_hook(self._count)
        if recompute:
            self.hidden.recompute()

    def _count(self, *args):
        self.calls += 1

    def construct(self, x):
        return self.out(self.hidden(x))


def _data(n=10, batch=4):
    rng = np.random.RandomState(0)
    x = rng.standard_normal((n, 4)).astype(np.float32)
    y = rng.randint(0, 3, size=n).astype(np.int32)
    return NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(batch)


def _model(recompute=False, **kwargs):
    ms.set_seed(0)  # the layer's initialisers draw from numpy, seeded here
    net = _Net(recompute)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    return net, Model(net, loss, nn.Momentum(net.trainable_params(), 0.1, 0.9), **kwargs)


class _Trace(Callback):
    def __init__(self, stop_at=None):
        self.events, self.stop_at = [], stop_at

    def begin(self, run_context):  # the old names run through the on_train_* defaults
        self.events.append("begin")

    def epoch_begin(self, run_context):
        self.events.append(f"epoch_begin {run_context.original_args().cur_epoch_num}")

    def on_train_step_end(self, run_context):
        params = run_context.original_args()
        self.events.append(f"step {params.cur_epoch_num}/{params.cur_step_num}/{params.batch_num}")
        if params.cur_step_num == self.stop_at:
            run_context.request_stop()

    def end(self, run_context):
        self.events.append("end")


def test_callbacks_see_mindspores_order_and_cb_params():
    trace = _Trace()
    _model()[1].train(2, _data(), callbacks=trace)
    assert trace.events == [
        "begin",
        "epoch_begin 1",
        "step 1/1/3",
        "step 1/2/3",
        "step 1/3/3",
        "epoch_begin 2",
        "step 2/4/3",
        "step 2/5/3",
        "step 2/6/3",
        "end",
    ]
    stopped = _Trace(stop_at=2)
    _model()[1].train(3, _data(), callbacks=[stopped])
    assert stopped.events == ["begin", "epoch_begin 1", "step 1/1/3", "step 1/2/3", "end"]


class _EvalEachEpoch(Callback):
    """What mindcv's ``StateMonitor`` does: ``model.eval`` in ``on_train_epoch_end``."""

    def __init__(self, net):
        self.net, self.model, self.modes = net, None, []

    def on_train_step_begin(self, run_context):
        self.modes.append(("begin", self.net.training))

    def on_train_step_end(self, run_context):
        self.modes.append(("step", self.net.training))

    def on_train_epoch_end(self, run_context):
        self.model.eval(_data())
        self.modes.append(("eval", self.net.training))


def test_training_steps_after_a_callbacks_eval_run_in_training_mode():
    """MindSpore's ``Model`` sets training mode before each step when an ``eval`` (or ``predict``)
    switched it (``_check_network_mode``); the steps of epoch 2 must not run BatchNorm and Dropout
    in inference mode. Like MindSpore, the mode is restored at the step, not at the epoch's start."""
    net, model = _model(metrics={"loss": Loss()})
    monitor = _EvalEachEpoch(net)
    monitor.model = model
    model.train(2, _data(), callbacks=[monitor])
    assert monitor.modes == [("begin", True), ("step", True)] * 3 + [("eval", False)] + [
        ("begin", False), ("step", True)] + [("begin", True), ("step", True)] * 2 + [("eval", False)]
    model.predict(ms.Tensor(np.zeros((2, 4), np.float32)))
    assert not net.training
    monitor.modes.clear()
    model.train(1, _data(), callbacks=[])
    assert net.training


def test_recompute_inside_model_train_reruns_the_cell_and_keeps_losses(capsys):
    losses = {}
    for recompute in (False, True):
        net, model = _model(recompute)
        model.train(1, _data(), callbacks=LossMonitor())
        losses[recompute] = capsys.readouterr().out
        assert net.calls == (6 if recompute else 3)  # 3 steps; recompute reruns the forward in backward
    assert losses[True] == losses[False] and losses[False].count("loss is") == 3


def test_loss_monitor_stops_on_nan():
    net, model = _model()
    with paddle.no_grad():
        net.out.weight.set_value(paddle.full([3, 8], float("nan")))
    with pytest.raises(ValueError, match="loss is NAN or INF"):
        model.train(1, _data(), callbacks=LossMonitor())


def test_model_checkpoint_schedule_keep_and_prefix(tmp_path):
    config = CheckpointConfig(save_checkpoint_steps=2, keep_checkpoint_max=2)
    _model()[1].train(2, _data(), callbacks=ModelCheckpoint("net", str(tmp_path), config))
    assert sorted(os.listdir(tmp_path)) == ["net-2_1.ckpt", "net-2_3.ckpt"]  # steps 2, 4, 6 (2, 6 kept)
    _model()[1].train(1, _data(), callbacks=ModelCheckpoint("net", str(tmp_path), config))
    assert sorted(os.listdir(tmp_path))[-2:] == ["net_1-1_2.ckpt", "net_1-1_3.ckpt"]
    names = list(ms.load_checkpoint(str(tmp_path / "net-2_3.ckpt")))
    assert names[:4] == ["hidden.0.weight", "hidden.0.bias", "out.weight", "out.bias"]
    assert (
        names[4:7] == ["global_step", "learning_rate", "momentum"] and names[7] == "moments.hidden.0.weight"
    )


def test_eval_fit_and_predict():
    net, model = _model(metrics={"acc": Accuracy(), "loss": Loss()})
    result = model.eval(_data())
    assert set(result) == {"acc", "loss"} and 0.0 <= result["acc"] <= 1.0
    seen = []

    class Metrics(Callback):
        def on_train_epoch_end(self, run_context):
            seen.append(dict(run_context.original_args().metrics))

    model.fit(2, _data(), _data(), callbacks=Metrics())
    assert len(seen) == 2 and set(seen[0]) == {"acc", "loss"}
    x = ms.Tensor(np.ones((2, 4), np.float32))
    np.testing.assert_array_equal(model.predict(x).numpy(), net(x).numpy())


@pytest.mark.parametrize(
    "call, error, text",
    [
        (lambda: Model("net"), TypeError, "'network' must be a Cell"),
        (lambda: _model()[1].train(0, _data()), ValueError, "'epoch' must be a positive int"),
        (lambda: _model()[1].eval(_data()), ValueError, "'metrics' can not be None"),
        (lambda: _model()[1].train(1, _data(), callbacks=[3]), TypeError, "must be Callback"),
        (lambda: _model(amp_level="O2"), NotImplementedError, "amp_level"),
        (lambda: CheckpointConfig(0, 0, 0, 0), ValueError, "can't be all None or 0"),
        (lambda: ModelCheckpoint("a/b"), ValueError, "does not contain '/'"),
        (lambda: LossMonitor(-1), ValueError, "non-negative"),
        (lambda: ms.train.EarlyStopping, ms.MissingAPIError, "mindspore.train.EarlyStopping"),
        (
            lambda: ms.train.callback.SummaryCollector(),  # exists (mindformers imports it); raises when used
            ms.MissingAPIError,
            "mindspore.train.callback.SummaryCollector",
        ),
        (lambda: ms.train.metrics.F1, ms.MissingAPIError, "mindspore.train.metrics.F1"),
        (lambda: Accuracy().eval(), RuntimeError, "number of samples is 0"),
        (lambda: Accuracy().update(1), ValueError, "needs 2 inputs"),
    ],
)
def test_bad_arguments_and_missing_apis(call, error, text):
    with pytest.raises(error, match=text):
        call()


def test_mixed_integer_comparison_widens_for_mindspore_code_only():
    """The tutorials' ``pred.argmax(1) == label``: int64 against an int32 label (MindSpore promotes)."""
    pred, label = paddle.to_tensor([1, 2, 3], dtype="int64"), paddle.to_tensor([1, 0, 3], dtype="int32")
    assert (pred == label).numpy().tolist() == [True, False, True]  # this module is MindSpore code
    assert (pred != label).numpy().tolist() == [False, True, False]
    namespace = {"__name__": "paddle.nn.made_up"}  # Paddle's own code keeps Paddle's operator
    exec("def compare(a, b):\n    return a == b\n", namespace)
    with pytest.raises(TypeError, match="Type promotion"):
        namespace["compare"](pred, label)


def _promoting_body(x, i64, i32):
    """MindSpore code mixing int64 and int32 (and int with float) inside a region."""
    return (x * (i64 + i32)).sum() + (x * (i32 - i64 * 2)).mean(), (i64 == i32)


@pytest.mark.parametrize("region", ["policy", "policy_reentrant_off_save", "cell_recompute", "ms_recompute"])
def test_promotion_holds_inside_recompute_regions(region):
    """NOTE [ Operators in observed regions ]: in a policy region Tensor operators reach the
    layer through paddle-recompute's observing wrappers; MindSpore's promotion still applies there,
    in the rerun of backward too, and the gradients equal those without any region."""
    from paddle_recompute import policies

    def data():
        x = ms.Tensor(np.linspace(-1, 1, 6).reshape(2, 3).astype(np.float32))
        x.stop_gradient = False
        return x, paddle.to_tensor(np.arange(6).reshape(2, 3), dtype="int64"), paddle.to_tensor(
            np.arange(6).reshape(2, 3)[::-1].copy(), dtype="int32")

    x0, i64, i32 = data()
    expected, equal = _promoting_body(x0, i64, i32)
    expected.backward()
    x, i64, i32 = data()
    calls = []

    class Block(ms.nn.Cell):
        def construct(self, x, a, b):
            calls.append(1)
            return _promoting_body(x, a, b)

    if region.startswith("policy"):
        policy = policies.recompute_all if region == "policy" else policies.save_matmuls
        out, eq = paddle_recompute.recompute(Block(), x, i64, i32, use_reentrant=False, policy=policy)
    elif region == "cell_recompute":
        block = Block()
        block.recompute()
        out, eq = block(x, i64, i32)
    else:
        out, eq = ms.recompute(Block(), x, i64, i32)
    out.backward()
    assert len(calls) == 2  # forward and its rerun in backward: the region recomputed
    assert eq.dtype == paddle.bool and eq.numpy().tolist() == equal.numpy().tolist()
    np.testing.assert_array_equal(out.numpy(), expected.numpy())
    np.testing.assert_array_equal(x.grad.numpy(), x0.grad.numpy())


def test_bad_arguments_raise_mindspores_exception_types():
    """``compat/record/record_errors.py`` (MindSpore code) under the layer: every case raises the
    type MindSpore 2.10 raised (or, like MindSpore, nothing)."""
    expected = json.loads((COMPAT / "tests" / "recorded" / "errors.json").read_text())
    ms.install_import_alias()
    try:
        spec = importlib.util.spec_from_file_location("record_errors", COMPAT / "record" / "record_errors.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found = module.outcomes()
    finally:
        ms.uninstall_import_alias()
    assert found == expected
