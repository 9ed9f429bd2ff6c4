"""Learning rates: MindSpore's per-step lists (``nn.cosine_decay_lr``, ...) and schedule cells.

The list functions are MindSpore's pure-Python formulas (``mindspore.nn.dynamic_lr``): step
``i`` belongs to epoch ``floor(i / step_per_epoch)``. A ``LearningRateSchedule`` is a Cell
called with the global step (a Tensor) that returns the rate; optimizers call it every step.
"""

from __future__ import annotations

import math

import paddle

from .._cell import Cell

__all__ = [
    "piecewise_constant_lr",
    "exponential_decay_lr",
    "natural_exp_decay_lr",
    "inverse_decay_lr",
    "cosine_decay_lr",
    "polynomial_decay_lr",
    "warmup_lr",
    "LearningRateSchedule",
    "CosineDecayLR",
    "WarmUpLR",
]


def _positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"The '{name}' must be a positive int, but got {value!r}.")
    return value


def _epochs(total_step: int, step_per_epoch: int) -> list[int]:
    _positive_int("total_step", total_step)
    _positive_int("step_per_epoch", step_per_epoch)
    return [math.floor(i / step_per_epoch) for i in range(total_step)]


def piecewise_constant_lr(milestone: list[int], learning_rates: list[float]) -> list[float]:
    """``learning_rates[j]`` for the steps ``milestone[j-1] <= i < milestone[j]``."""
    if len(milestone) != len(learning_rates):
        raise ValueError(
            f"For 'piecewise_constant_lr', the size of 'milestone' must be same with the size of "
            f"'learning_rates', but got 'milestone' size: {len(milestone)}, 'learning_rates' "
            f"size: {len(learning_rates)}."
        )
    lr, last = [], 0
    for stop, rate in zip(milestone, learning_rates, strict=True):
        if _positive_int("milestone", stop) <= last:
            raise ValueError("For 'piecewise_constant_lr', the 'milestone' must be strictly increasing.")
        lr += [rate] * (stop - last)
        last = stop
    return lr


def _decay(
    learning_rate: float,
    decay_rate: float,
    total_step: int,
    step_per_epoch: int,
    decay_epoch: int,
    is_stair: bool,
    rule,
) -> list[float]:
    _positive_int("decay_epoch", decay_epoch)
    out = []
    for epoch in _epochs(total_step, step_per_epoch):
        p = math.floor(epoch / decay_epoch) if is_stair else epoch / decay_epoch
        out.append(rule(learning_rate, decay_rate, p))
    return out


def exponential_decay_lr(learning_rate: float, decay_rate: float, total_step: int, step_per_epoch: int,
                         decay_epoch: int, is_stair: bool = False) -> list[float]:
    """``learning_rate * decay_rate ** (epoch / decay_epoch)``."""
    return _decay(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair,
                  lambda lr, rate, p: lr * rate**p)


def natural_exp_decay_lr(learning_rate: float, decay_rate: float, total_step: int, step_per_epoch: int,
                         decay_epoch: int, is_stair: bool = False) -> list[float]:
    """``learning_rate * e ** (-decay_rate * epoch)``: unlike its siblings, MindSpore does not divide
    the epoch by ``decay_epoch`` here (with ``is_stair`` it rounds it down to a multiple of it)."""
    _positive_int("decay_epoch", decay_epoch)
    return [
        learning_rate
        * math.e ** (-decay_rate * (math.floor(e / decay_epoch) * decay_epoch if is_stair else e))
        for e in _epochs(total_step, step_per_epoch)
    ]


def inverse_decay_lr(learning_rate: float, decay_rate: float, total_step: int, step_per_epoch: int,
                     decay_epoch: int, is_stair: bool = False) -> list[float]:
    """``learning_rate / (1 + decay_rate * epoch / decay_epoch)``."""
    return _decay(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair,
                  lambda lr, rate, p: lr / (1 + rate * p))


def cosine_decay_lr(
    min_lr: float, max_lr: float, total_step: int, step_per_epoch: int, decay_epoch: int
) -> list[float]:
    """``min_lr + (max_lr - min_lr) / 2 * (1 + cos(pi * min(epoch, decay_epoch) / decay_epoch))``."""
    _positive_int("decay_epoch", decay_epoch)
    if min_lr >= max_lr:
        raise ValueError(
            f"For 'cosine_decay_lr', the 'max_lr' should be greater than the 'min_lr', "
            f"but got 'max_lr' value: {max_lr}, 'min_lr' value: {min_lr}."
        )
    delta = 0.5 * (max_lr - min_lr)
    return [
        min_lr + delta * (1 + math.cos(math.pi * min(e, decay_epoch) / decay_epoch))
        for e in _epochs(total_step, step_per_epoch)
    ]


def polynomial_decay_lr(
    learning_rate: float,
    end_learning_rate: float,
    total_step: int,
    step_per_epoch: int,
    decay_epoch: int,
    power: float,
    update_decay_epoch: bool = False,
) -> list[float]:
    """``(learning_rate - end) * (1 - epoch / decay_epoch) ** power + end``."""
    _positive_int("decay_epoch", decay_epoch)
    delta, out = learning_rate - end_learning_rate, []
    for epoch in _epochs(total_step, step_per_epoch):
        if update_decay_epoch:
            span = decay_epoch * max(1, math.ceil(epoch / decay_epoch))
        else:
            epoch, span = min(epoch, decay_epoch), decay_epoch
        out.append(delta * (1 - epoch / span) ** power + end_learning_rate)
    return out


def warmup_lr(learning_rate: float, total_step: int, step_per_epoch: int, warmup_epoch: int) -> list[float]:
    """``learning_rate * min(epoch, warmup_epoch) / warmup_epoch``."""
    _positive_int("warmup_epoch", warmup_epoch)
    return [learning_rate * min(e, warmup_epoch) / warmup_epoch for e in _epochs(total_step, step_per_epoch)]


class LearningRateSchedule(Cell):
    """Base of the schedule cells: ``construct(global_step)`` returns the rate of that step."""

    def construct(self, global_step: paddle.Tensor) -> paddle.Tensor:
        raise NotImplementedError(f"{type(self).__name__} must define construct(global_step)")


class CosineDecayLR(LearningRateSchedule):
    """``nn.CosineDecayLR(min_lr, max_lr, decay_steps)``: ``min_lr + (max_lr - min_lr) / 2 *
    (1 + cos(pi * min(step, decay_steps) / decay_steps))``."""

    def __init__(self, min_lr: float, max_lr: float, decay_steps: int):
        super().__init__()
        if min_lr >= max_lr:
            raise ValueError("For 'CosineDecayLR', the 'max_lr' should be greater than the 'min_lr'.")
        self.min_lr, self.max_lr = min_lr, max_lr
        self.decay_steps = _positive_int("decay_steps", decay_steps)

    def construct(self, global_step: paddle.Tensor) -> paddle.Tensor:
        step = paddle.minimum(global_step.astype("float32"), paddle.to_tensor(float(self.decay_steps)))
        cosine = paddle.cos(step * (math.pi / self.decay_steps))
        return self.min_lr + 0.5 * (self.max_lr - self.min_lr) * (1.0 + cosine)


class WarmUpLR(LearningRateSchedule):
    """``nn.WarmUpLR(learning_rate, warmup_steps)``: ``learning_rate * min(step, warmup_steps) /
    warmup_steps``."""

    def __init__(self, learning_rate: float, warmup_steps: int):
        super().__init__()
        self.learning_rate = learning_rate
        self.warmup_steps = _positive_int("warmup_steps", warmup_steps)

    def construct(self, global_step: paddle.Tensor) -> paddle.Tensor:
        step = paddle.minimum(global_step.astype("float32"), paddle.to_tensor(float(self.warmup_steps)))
        return self.learning_rate * step / self.warmup_steps
