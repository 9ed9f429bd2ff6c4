"""``mindspore.train.Model``: ``train``, ``eval``, ``predict`` and ``fit`` with callbacks and metrics.

``Model(network, loss_fn, optimizer)`` trains ``nn.TrainOneStepCell(nn.WithLossCell(network,
loss_fn), optimizer)`` one batch at a time; callbacks see MindSpore's ``cb_params``
(``cur_epoch_num``, ``cur_step_num`` counted over all epochs, ``batch_num``, ``net_outputs``,
``epoch_num``, ``mode``, ``train_network``, ``optimizer``, ``dataset_sink_mode``, ...).
``dataset_sink_mode=True`` is accepted and runs exactly as ``False`` (every step a Python step,
callbacks per step, ``cb_params.dataset_sink_mode`` False), which is what MindSpore 2.10 does
on CPU (recorded), with the same warning.
``loss_scale_manager=``: with an update cell (``DynamicLossScaleManager``,
``FixedLossScaleManager()``) the train network is ``nn.TrainOneStepWithLossScaleCell``, as
MindSpore builds it on GPU and Ascend (its CPU build refuses these two); without one
(``FixedLossScaleManager(drop_overflow_update=False)``) ``TrainOneStepCell`` seeded with the scale.
Evaluation runs ``loss_fn(network(data), label)``: ``Loss`` receives the loss, every other
metric the logits and the label, as MindSpore's evaluation network gives them.
"""

from __future__ import annotations

import warnings
from typing import Any

import paddle

from .._validate import not_provided
from ..nn import TrainOneStepCell, TrainOneStepWithLossScaleCell, WithLossCell
from .callback._callback import CallbackList, CallbackParams, RunContext
from .metrics import (
    Accuracy,
    Loss,
    Metric,
    Precision,
    Recall,
    Top1CategoricalAccuracy,
    Top5CategoricalAccuracy,
)

__all__ = ["Model"]

_NAMED_METRICS = {
    "acc": Accuracy,
    "accuracy": Accuracy,
    "loss": Loss,
    "precision": Precision,
    "recall": Recall,
    "top_1_accuracy": Top1CategoricalAccuracy,
    "top_5_accuracy": Top5CategoricalAccuracy,
}


def _metrics(metrics: Any) -> dict[str, Metric]:
    if metrics is None:
        return {}
    if isinstance(metrics, dict):
        bad = [k for k, v in metrics.items() if not isinstance(v, Metric)]
        if bad:
            raise TypeError(
                f"For 'Model', the value of 'metrics' dict must be a Metric, but got "
                f"{type(metrics[bad[0]])} for {bad[0]!r}."
            )
        return dict(metrics)
    if isinstance(metrics, set):
        unknown = sorted(m for m in metrics if m not in _NAMED_METRICS)
        if unknown:
            raise not_provided(f"the metric name {unknown[0]!r}", f"names provided: {sorted(_NAMED_METRICS)}")
        return {name: _NAMED_METRICS[name]() for name in metrics}
    raise TypeError(f"For 'Model', the argument 'metrics' must be dict or set, but got {type(metrics)}.")


def _positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(
            f"For 'Model.train', the argument '{name}' must be a positive int, but got {value!r}."
        )
    return value


class Model:
    def __init__(
        self,
        network: paddle.nn.Layer,
        loss_fn: Any = None,
        optimizer: Any = None,
        metrics: Any = None,
        eval_network: Any = None,
        eval_indexes: Any = None,
        amp_level: str = "O0",
        boost_level: str = "O0",
        **kwargs: Any,
    ):
        if not isinstance(network, paddle.nn.Layer):
            raise TypeError(f"For 'Model', the argument 'network' must be a Cell, but got {type(network)}.")
        self._loss_scale_manager = kwargs.pop("loss_scale_manager", None)
        if amp_level != "O0" or boost_level != "O0" or kwargs:
            raise not_provided(
                f"Model(amp_level={amp_level!r}, boost_level={boost_level!r}, {sorted(kwargs)})",
                "mixed precision and boost are not provided; use the defaults",
            )
        if eval_indexes is not None and (not isinstance(eval_indexes, list) or len(eval_indexes) != 3):
            raise ValueError("For 'Model', the length of 'eval_indexes' must be 3, but got {eval_indexes}.")
        self._network, self._loss_fn, self._optimizer = network, loss_fn, optimizer
        self._metric_fns = _metrics(metrics)
        self._eval_network, self._eval_indexes = eval_network, eval_indexes
        self._train_network = self._build_train_network()
        self._backbone_is_train = True  # the mode Model last set (MindSpore's flag of that name)

    def _check_network_mode(self, network: paddle.nn.Layer, is_train: bool) -> None:
        """MindSpore's check before each training, evaluation and prediction step: ``set_train``
        when the mode Model last set differs. A callback's ``model.eval`` between epochs (mindcv's
        ``StateMonitor``) leaves the network in inference mode; the next training step restores it."""
        if self._backbone_is_train != is_train:
            network.set_train(is_train)
            self._backbone_is_train = is_train

    def _build_train_network(self) -> paddle.nn.Layer:
        if self._optimizer is None:
            return self._network if self._loss_fn is None else WithLossCell(self._network, self._loss_fn)
        network = self._network if self._loss_fn is None else WithLossCell(self._network, self._loss_fn)
        manager = self._loss_scale_manager
        if manager is None:
            return TrainOneStepCell(network, self._optimizer)
        update_cell = manager.get_update_cell()
        if update_cell is None:  # FixedLossScaleManager(drop_overflow_update=False): seed only
            return TrainOneStepCell(network, self._optimizer, sens=manager.get_loss_scale())
        return TrainOneStepWithLossScaleCell(network, self._optimizer, scale_sense=update_cell)

    @property
    def train_network(self) -> paddle.nn.Layer:
        return self._train_network

    @property
    def predict_network(self) -> paddle.nn.Layer:
        return self._network

    @property
    def eval_network(self) -> Any:
        return self._eval_network

    # training --------------------------------------------------------------------------
    def train(
        self,
        epoch: int,
        train_dataset: Any,
        callbacks: Any = None,
        dataset_sink_mode: bool = False,
        sink_size: int = -1,
        initial_epoch: int = 0,
    ) -> None:
        """``epoch`` passes over ``train_dataset`` (from ``initial_epoch``), calling ``callbacks``."""
        self._run_train(epoch, train_dataset, callbacks, dataset_sink_mode, sink_size, initial_epoch, None)

    def fit(
        self,
        epoch: int,
        train_dataset: Any,
        valid_dataset: Any = None,
        valid_frequency: int = 1,
        callbacks: Any = None,
        dataset_sink_mode: bool = False,
        valid_dataset_sink_mode: bool = False,
        sink_size: int = -1,
        initial_epoch: int = 0,
    ) -> None:
        """``train``, evaluating ``valid_dataset`` every ``valid_frequency`` epochs (results in
        ``cb_params.metrics``, printed by ``LossMonitor``)."""
        valid = (
            None
            if valid_dataset is None
            else (valid_dataset, _positive_int(valid_frequency, "valid_frequency"))
        )
        self._run_train(epoch, train_dataset, callbacks, dataset_sink_mode, sink_size, initial_epoch, valid)

    def _params(self, epoch: int, dataset: Any, callbacks: CallbackList, sink: bool) -> CallbackParams:
        return CallbackParams(
            train_network=self._train_network,
            network=self._network,
            epoch_num=epoch,
            batch_num=dataset.get_dataset_size(),
            mode="train",
            loss_fn=self._loss_fn,
            optimizer=self._optimizer,
            parallel_mode="stand_alone",
            device_number=1,
            train_dataset=dataset,
            list_callback=callbacks.callbacks,
            cur_epoch_num=0,
            cur_step_num=0,
            dataset_sink_mode=sink,
            net_outputs=None,
            metrics=None,
        )

    def _run_train(
        self,
        epoch: int,
        dataset: Any,
        callbacks: Any,
        sink: bool,
        sink_size: int,
        initial_epoch: int,
        valid: tuple | None,
    ) -> None:
        _positive_int(epoch, "epoch")
        if not isinstance(sink, bool):
            raise TypeError(
                f"For 'Model.train', the argument 'dataset_sink_mode' must be bool, but got {sink!r}."
            )
        if sink_size != -1:
            raise not_provided("Model.train(sink_size=...)", "every epoch is one pass over the dataset")
        if self._optimizer is None and self._loss_fn is not None:
            raise ValueError("For 'Model.train', the argument 'optimizer' can not be None when training.")
        if not 0 <= initial_epoch < epoch:
            raise ValueError(
                f"For 'Model.train', 'initial_epoch' must be in [0, epoch), but got {initial_epoch}."
            )
        if sink:
            warnings.warn(
                "The CPU cannot support dataset sink mode currently. So the training process will be "
                "performed with dataset not sink.",
                stacklevel=3,
            )
        with CallbackList(callbacks) as cbs:
            self._train_epochs(epoch, dataset, cbs, initial_epoch, valid)

    def _train_epochs(
        self, epoch: int, dataset: Any, cbs: CallbackList, initial_epoch: int, valid: tuple | None
    ) -> None:
        cb_params = self._params(epoch - initial_epoch, dataset, cbs, False)  # MindSpore: epochs left
        run_context = RunContext(cb_params)
        rows = dataset.create_tuple_iterator(num_epochs=epoch - initial_epoch)
        self._train_network.set_train(True)
        self._backbone_is_train = True
        cbs.call("on_train_begin", run_context)
        for index in range(initial_epoch, epoch):
            cb_params.cur_epoch_num = index + 1
            cbs.call("on_train_epoch_begin", run_context)
            for inputs in rows:
                cb_params.cur_step_num += 1
                cbs.call("on_train_step_begin", run_context)
                self._check_network_mode(self._train_network, True)
                cb_params.net_outputs = self._train_network(*inputs)
                cbs.call("on_train_step_end", run_context)
                if run_context.get_stop_requested():
                    break
            if valid is not None and (index + 1) % valid[1] == 0:
                cb_params.metrics = self.eval(valid[0])
                self._train_network.set_train(True)
            cbs.call("on_train_epoch_end", run_context)
            if run_context.get_stop_requested():
                break
        cbs.call("on_train_end", run_context)

    # evaluation and prediction -----------------------------------------------------------
    def _eval_outputs(self, inputs: list) -> tuple:
        if self._eval_network is not None:
            outputs = self._eval_network(*inputs)
            return outputs if isinstance(outputs, tuple) else (outputs,)
        if self._loss_fn is None:
            return (self._network(*inputs[:-1]), inputs[-1])
        logits = self._network(*inputs[:-1])
        return self._loss_fn(logits, inputs[-1]), logits, inputs[-1]

    def _update(self, outputs: tuple) -> None:
        indexes = self._eval_indexes or ([0, 1, 2] if len(outputs) == 3 else None)
        for metric in self._metric_fns.values():
            if metric.indexes is not None:
                metric.update(*[outputs[i] for i in metric.indexes])
            elif indexes is None:
                metric.update(*outputs)
            elif isinstance(metric, Loss):
                metric.update(outputs[indexes[0]])
            else:
                metric.update(outputs[indexes[1]], outputs[indexes[2]])

    def eval(self, valid_dataset: Any, callbacks: Any = None, dataset_sink_mode: bool = False) -> dict:
        """``{name: value}`` for every metric over one pass of ``valid_dataset``."""
        if not self._metric_fns:
            raise ValueError(
                "For 'Model.eval', the model argument 'metrics' can not be None or empty, "
                "you should set the argument 'metrics' for model."
            )
        with CallbackList(callbacks) as cbs:
            return self._eval_pass(valid_dataset, cbs, dataset_sink_mode)

    def _eval_pass(self, valid_dataset: Any, cbs: CallbackList, dataset_sink_mode: bool) -> dict:
        cb_params = CallbackParams(
            eval_network=self._eval_network or self._network,
            valid_dataset=valid_dataset,
            batch_num=valid_dataset.get_dataset_size(),
            mode="eval",
            cur_step_num=0,
            cur_epoch_num=1,
            dataset_sink_mode=dataset_sink_mode,
            net_outputs=None,
        )
        run_context = RunContext(cb_params)
        for metric in self._metric_fns.values():
            metric.clear()
        self._network.set_train(False)
        self._backbone_is_train = False
        cbs.call("on_eval_begin", run_context)
        with paddle.no_grad():
            for inputs in valid_dataset.create_tuple_iterator(num_epochs=1):
                cb_params.cur_step_num += 1
                cbs.call("on_eval_step_begin", run_context)
                cb_params.net_outputs = self._eval_outputs(list(inputs))
                self._update(cb_params.net_outputs)
                cbs.call("on_eval_step_end", run_context)
        result = {name: metric.eval() for name, metric in self._metric_fns.items()}
        cb_params.metrics = result
        cbs.call("on_eval_end", run_context)
        return result

    def predict(self, *predict_data: Any, backend: Any = None, config: Any = None) -> Any:
        """The network's output on ``predict_data`` in inference mode."""
        self._network.set_train(False)
        self._backbone_is_train = False
        with paddle.no_grad():
            return self._network(*predict_data)
