"""Loss scaling: ``nn.TrainOneStepWithLossScaleCell`` and its update cells.

MindSpore's semantics (``mindspore/nn/wrap/loss_scale.py``, recorded): the loss's gradient is
seeded with the scale, the gradients are multiplied by its reciprocal, and the step overflows
when any gradient holds an inf or a nan; the update cell then adjusts the scale, and the
optimizer runs only without overflow. The cell returns ``(loss, overflow, scale_sense)``, where
``scale_sense`` is the cell's Parameter itself (later updates show in it, as in MindSpore).
"""

from __future__ import annotations

from typing import Any

import paddle

from .._cell import Cell
from .._grad import differentiate
from .._tensor import Parameter
from ..ops._graph import HyperMap
from ._wrap import TrainOneStepCell

__all__ = ["DynamicLossScaleUpdateCell", "FixedLossScaleUpdateCell", "TrainOneStepWithLossScaleCell"]


def _scalar(value: Any, dtype: str) -> paddle.Tensor:
    return paddle.to_tensor(value, dtype=dtype)


class DynamicLossScaleUpdateCell(Cell):
    """``nn.DynamicLossScaleUpdateCell(loss_scale_value, scale_factor, scale_window)``.

    ``cell(loss_scale, overflow)`` updates the ``loss_scale`` Parameter in place: on overflow it
    divides it by ``scale_factor`` (not below 1); after ``scale_window`` steps since the last
    overflow or increase it multiplies it by ``scale_factor``. Its step counters are the
    Parameters ``current_iterator_step`` (from 1) and ``last_overflow_iterator_step``.
    """

    def __init__(self, loss_scale_value: float, scale_factor: float, scale_window: int):
        super().__init__()
        self.scale_window = int(scale_window)
        self.scale_factor = float(scale_factor)
        self.loss_scale_value = loss_scale_value
        self.cur_iter = Parameter(_scalar(1, "int32"), name="current_iterator_step", requires_grad=False)
        self.last_overflow_iter = Parameter(_scalar(0, "int32"), name="last_overflow_iterator_step",
                                            requires_grad=False)

    def get_loss_scale(self) -> float:
        return self.loss_scale_value

    def construct(self, loss_scale: paddle.Tensor, overflow: Any) -> Any:
        flag = bool(overflow)
        scale = float(loss_scale)
        cur, last = int(self.cur_iter), int(self.last_overflow_iter)
        if flag:
            scale = max(scale / self.scale_factor, 1.0)
        should_increase = cur - last >= self.scale_window
        if flag or should_increase:
            last = cur
        if should_increase and not flag:
            scale *= self.scale_factor
        with paddle.no_grad():
            paddle.assign(_scalar(scale, loss_scale.dtype), output=loss_scale)
            paddle.assign(_scalar(last, "int32"), output=self.last_overflow_iter)
            paddle.assign(_scalar(cur + 1, "int32"), output=self.cur_iter)
        return overflow


class FixedLossScaleUpdateCell(Cell):
    """``nn.FixedLossScaleUpdateCell(loss_scale_value)``: the scale never changes; an overflowing
    step is still skipped."""

    def __init__(self, loss_scale_value: float):
        super().__init__()
        self.loss_scale_value = loss_scale_value

    def get_loss_scale(self) -> float:
        return self.loss_scale_value

    def construct(self, loss_scale: paddle.Tensor, overflow: Any) -> Any:
        return overflow


def _sense(scale_sense: Any) -> tuple[paddle.Tensor, Cell | None]:
    if isinstance(scale_sense, Cell):
        value = _scalar(scale_sense.get_loss_scale(), "float32")
        return Parameter(value, name="scale_sense"), scale_sense
    if isinstance(scale_sense, paddle.Tensor):
        if tuple(scale_sense.shape) not in ((1,), ()):
            raise ValueError("For 'TrainOneStepWithLossScaleCell', the shape of 'scale_sense' must be (1,) "
                             f"or (), but got {tuple(scale_sense.shape)}.")
        return Parameter(scale_sense, name="scale_sense"), None
    raise TypeError("For 'TrainOneStepWithLossScaleCell', the 'scale_sense' must be Cell or Tensor, but "
                    f"got 'scale_sense' type: {type(scale_sense)}.")


class TrainOneStepWithLossScaleCell(TrainOneStepCell):
    """``nn.TrainOneStepWithLossScaleCell(network, optimizer, scale_sense)``.

    ``scale_sense``: an update cell (``DynamicLossScaleUpdateCell``, ``FixedLossScaleUpdateCell``:
    the scale starts at its ``get_loss_scale()``) or a Tensor of shape ``()`` or ``(1,)`` (a fixed
    scale, changed with ``set_sense_scale``). The methods subclasses call (mindcv's ``TrainStep``)
    are MindSpore's: ``start_overflow_check``, ``get_overflow_status``, ``process_loss_scale``,
    ``grad`` (``GradOperation(get_by_list=True, sens_param=True)``), ``grad_reducer`` (the
    identity on one device) and ``hyper_map``.
    """

    def __init__(self, network: paddle.nn.Layer, optimizer: Any, scale_sense: Any):
        super().__init__(network, optimizer)
        self.hyper_map = HyperMap()
        self.scale_sense, self.loss_scaling_manager = _sense(scale_sense)

    def construct(self, *inputs: Any) -> tuple:
        scale = self.scale_sense
        losses = []

        def forward(*args: Any) -> paddle.Tensor:  # the loss's gradient seeded with the scale
            losses.append(self.network(*args))
            return losses[0] * scale.detach().reshape([]).astype(losses[0].dtype)

        _, _, grads = differentiate(forward, inputs, {}, (), list(self.weights))
        grads = tuple(g * paddle.reciprocal(scale.detach()).astype(g.dtype) for g in grads)
        grads = self.grad_reducer(grads)
        cond = self.get_overflow_status(None, grads)
        if not self.process_loss_scale(cond):
            self.optimizer(grads)
        return losses[0].detach(), cond, scale

    def set_sense_scale(self, sens: Any) -> None:
        if not isinstance(sens, paddle.Tensor):
            raise TypeError("For 'TrainOneStepWithLossScaleCell', the type of 'sens' must be Tensor, "
                            f"but got {type(sens)}")
        with paddle.no_grad():
            paddle.assign(sens.astype(self.scale_sense.dtype).reshape(self.scale_sense.shape),
                          output=self.scale_sense)

    def start_overflow_check(self, pre_cond: Any, compute_input: Any) -> tuple:
        """``(status, compute_input)``: eager execution needs no status buffer to clear."""
        return None, compute_input

    def get_overflow_status(self, status: Any, compute_output: Any) -> paddle.Tensor:
        """A bool scalar Tensor: whether any gradient holds an inf or a nan."""
        flags = [paddle.logical_not(paddle.isfinite(g)).any() for g in _tensors(compute_output)]
        return paddle.stack(flags).any() if flags else paddle.to_tensor(False)

    def process_loss_scale(self, overflow: Any) -> Any:
        if self.loss_scaling_manager is not None:
            return self.loss_scaling_manager(self.scale_sense, overflow)
        return overflow


def _tensors(value: Any) -> list[paddle.Tensor]:
    if isinstance(value, paddle.Tensor):
        return [value]
    return [t for item in value for t in _tensors(item)]

