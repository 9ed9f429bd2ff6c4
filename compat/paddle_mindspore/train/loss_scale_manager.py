"""``FixedLossScaleManager`` and ``DynamicLossScaleManager`` (also ``mindspore.amp``'s).

MindSpore's host-side managers (``mindspore/train/loss_scale_manager.py``): ``get_loss_scale``,
``update_loss_scale(overflow)``, ``get_drop_overflow_update`` and ``get_update_cell`` (the
``nn`` update cell that ``Model`` gives ``nn.TrainOneStepWithLossScaleCell``).
"""

from __future__ import annotations

from typing import Any

from ..nn import DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell

__all__ = ["LossScaleManager", "FixedLossScaleManager", "DynamicLossScaleManager"]


def _check(owner: str, name: str, value: Any, low: float, kinds: tuple) -> Any:
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise TypeError(f"For '{owner}', the type of '{name}' must be {kinds[0].__name__}, but got "
                        f"{type(value).__name__}.")
    if value < low:
        raise ValueError(f"For '{owner}', the '{name}' must be >= {low}, but got {value}.")
    return value


class LossScaleManager:
    """The base of the loss-scale managers."""

    def get_loss_scale(self) -> Any:
        raise NotImplementedError

    def update_loss_scale(self, overflow: bool) -> None:
        raise NotImplementedError

    def get_update_cell(self) -> Any:
        raise NotImplementedError


class FixedLossScaleManager(LossScaleManager):
    """``FixedLossScaleManager(loss_scale=128.0, drop_overflow_update=True)``: a constant scale;
    with ``drop_overflow_update`` an overflowing step is skipped (update cell
    ``FixedLossScaleUpdateCell``), without it there is no update cell (``Model`` then trains a
    ``TrainOneStepCell`` seeded with the scale; give the optimizer the same ``loss_scale``)."""

    def __init__(self, loss_scale: float = 128.0, drop_overflow_update: bool = True):
        _check("FixedLossScaleManager", "loss_scale", loss_scale, 1, (float, int))
        self._loss_scale = loss_scale
        self._drop_overflow_update = drop_overflow_update

    def get_loss_scale(self) -> Any:
        return self._loss_scale

    def get_drop_overflow_update(self) -> bool:
        return self._drop_overflow_update

    def update_loss_scale(self, overflow: bool) -> None:
        """The scale is fixed: nothing changes."""

    def get_update_cell(self) -> Any:
        if not self._drop_overflow_update:
            return None
        return FixedLossScaleUpdateCell(self._loss_scale)


class DynamicLossScaleManager(LossScaleManager):
    """``DynamicLossScaleManager(init_loss_scale=2**24, scale_factor=2, scale_window=2000)``.

    ``update_loss_scale(overflow)``: on overflow the scale is divided by ``scale_factor`` (not
    below 1); after every ``scale_window`` steps without one it is multiplied by it. More than
    1000 overflowing steps in a row raise ``RuntimeError``, as in MindSpore.
    """

    def __init__(self, init_loss_scale: float = 2**24, scale_factor: int = 2, scale_window: int = 2000):
        owner = "DynamicLossScaleManager"
        _check(owner, "init_loss_scale", init_loss_scale, 1, (float, int))
        self.loss_scale = init_loss_scale
        self.scale_window = _check(owner, "scale_window", scale_window, 1, (int,))
        if scale_factor <= 0:
            raise ValueError(f"For '{owner}', the 'scale_factor' must be > 0, but got {scale_factor}.")
        self.scale_factor = scale_factor
        self.increase_ratio, self.decrease_ratio = scale_factor, 1 / scale_factor
        self.cur_iter, self.last_overflow_iter = 1, 0
        self.bad_step_max, self.bad_step = 1000, 0

    def get_loss_scale(self) -> Any:
        return self.loss_scale

    def update_loss_scale(self, overflow: bool) -> None:
        if overflow:
            self.loss_scale = max(self.loss_scale * self.decrease_ratio, 1)
            self.last_overflow_iter = self.cur_iter
            self.bad_step += 1
        else:
            if (self.cur_iter - self.last_overflow_iter) % self.scale_window == 0:
                self.loss_scale *= self.increase_ratio
            self.bad_step = 0
        if self.bad_step > self.bad_step_max:
            raise RuntimeError(f"Dynamic loss scale Continuous overflow {self.bad_step} times, which "
                               f"exceeds the maximum {self.bad_step_max}.")
        self.cur_iter += 1

    def get_drop_overflow_update(self) -> bool:
        return True

    def get_update_cell(self) -> Any:
        return DynamicLossScaleUpdateCell(self.loss_scale, self.scale_factor, self.scale_window)
