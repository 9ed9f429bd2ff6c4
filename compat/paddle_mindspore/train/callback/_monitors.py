"""``LossMonitor`` and ``TimeMonitor``: MindSpore's printed lines.

``LossMonitor`` prints ``epoch: E step: S, loss is L`` (``S`` counted within the epoch, ``L``
the mean of the step's loss as a Python float) every ``per_print_times`` steps, and raises
``ValueError`` on a NaN or infinite loss; ``TimeMonitor`` prints
``Train epoch time: T ms, per step time: t ms`` at each epoch end.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ._callback import Callback, RunContext

__all__ = ["LossMonitor", "TimeMonitor", "loss_value"]


def loss_value(outputs: Any) -> Any:
    """MindSpore's ``_handle_loss``: the first output of a tuple; a Tensor's mean as a float."""
    if isinstance(outputs, tuple | list):
        return outputs[0]
    if hasattr(outputs, "numpy"):
        return float(np.mean(outputs.numpy()))
    return outputs


def _non_negative_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"The argument '{name}' must be int, but got {type(value).__name__}.")
    if value < 0:
        raise ValueError(f"The argument '{name}' must be non-negative int, but got {value}.")
    return value


class LossMonitor(Callback):
    def __init__(self, per_print_times: int = 1):
        super().__init__()
        self._per_print_times = _non_negative_int(per_print_times, "per_print_times")
        self._last_print_time = 0

    def step_end(self, run_context: RunContext) -> None:
        cb_params = run_context.original_args()
        epoch = cb_params.get("cur_epoch_num", 1)
        loss = loss_value(cb_params.net_outputs)
        step_in_epoch = (cb_params.cur_step_num - 1) % cb_params.batch_num + 1
        if isinstance(loss, float) and (np.isnan(loss) or np.isinf(loss)):
            raise ValueError(
                f"In epoch: {epoch} step: {step_in_epoch}, loss is NAN or INF, training process "
                f"cannot continue, terminating training."
            )
        if self._per_print_times and cb_params.cur_step_num <= self._last_print_time:
            while cb_params.cur_step_num <= self._last_print_time:  # a new run of train() restarts counting
                self._last_print_time -= self._per_print_times
        if self._per_print_times and cb_params.cur_step_num - self._last_print_time >= self._per_print_times:
            self._last_print_time = cb_params.cur_step_num
            print(f"epoch: {epoch} step: {step_in_epoch}, loss is {loss}", flush=True)

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        metrics = run_context.original_args().get("metrics")
        if metrics:
            epoch = run_context.original_args().cur_epoch_num
            print(f"Eval result: epoch {epoch}, metrics: {metrics}")


class TimeMonitor(Callback):
    def __init__(self, data_size: int | None = None, data_time: bool = False):
        super().__init__()
        if not isinstance(data_time, bool):
            raise TypeError(f"The argument 'data_time' must be bool, but got {type(data_time).__name__}.")
        self.data_size, self.data_time = data_size, data_time
        self.epoch_time = time.time()
        self._data_sum, self._data_start = 0.0, 0.0

    def on_train_step_begin(self, run_context: RunContext) -> None:
        if self.data_time:
            self._data_sum += time.time() - self._data_start

    def on_train_step_end(self, run_context: RunContext) -> None:
        if self.data_time:
            self._data_start = time.time()

    def epoch_begin(self, run_context: RunContext) -> None:
        self.epoch_time = time.time()
        self._data_sum, self._data_start = 0.0, time.time()

    def epoch_end(self, run_context: RunContext) -> None:
        epoch_ms = (time.time() - self.epoch_time) * 1000
        cb_params = run_context.original_args()
        steps = cb_params.get("batch_num") or self.data_size
        if not isinstance(steps, int) or steps <= 0:
            raise ValueError(f"TimeMonitor: the number of steps must be a positive int, but got {steps}.")
        line = (
            f"{cb_params.get('mode', '').title()} epoch time: {epoch_ms:5.3f} ms, per step time: "
            f"{epoch_ms / steps:5.3f} ms"
        )
        if self.data_time:
            line += f" (data time: {self._data_sum * 1000 / steps:5.3f} ms)"
        print(line, flush=True)
