"""``mindspore.nn.optim.optimizer``: the ``Optimizer`` base, with MindSpore's shared rules.

``optimizer(grads)`` updates ``optimizer.parameters`` in place (the gradients in their order)
and advances ``global_step``, as MindSpore's optimizer cells do.

- Parameters: a list of Parameters, or groups: ``[{"params": [...], "lr": ..., "weight_decay":
  ...}, ..., {"order_params": [...]}]``. A group's ``lr`` and ``weight_decay`` override the
  optimizer's; ``order_params`` fixes the order of ``parameters`` (and so of the gradients).
- Learning rate: a number, a list or 1-D Tensor of per-step rates (step ``global_step``), or a
  ``LearningRateSchedule`` cell called with ``global_step``. Rates are float32, as in MindSpore.
- Weight decay, added to the gradient (``g + wd * loss_scale * p``, then divided by
  ``loss_scale``, as MindSpore does) except for AdamWeightDecay, which adds ``wd * p`` to its
  update: ungrouped, it applies to every parameter whose *name* contains neither ``'beta'`` nor
  ``'gamma'``; grouped, to every parameter of a group whose weight decay is above 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import paddle

from ..._surface.data import param_name
from ..._tensor import ParameterTuple
from ..._validate import missing, not_provided
from .._learning_rate import LearningRateSchedule

__all__ = ["Optimizer", "opt_init_args_register"]

_GROUP_KEYS = ("params", "lr", "weight_decay", "grad_centralization", "order_params")


def opt_init_args_register(fn: Callable) -> Callable:
    """MindSpore's decorator that records an optimizer's ``__init__`` arguments (for its graph
    compiler's bookkeeping); the ``__init__`` runs unchanged."""
    return fn


def _float32(value: Any) -> float:
    return float(np.float32(value))


def _check_decay(owner: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise TypeError(f"For '{owner}', 'weight_decay' must be a float >= 0, but got {value!r}.")
    return float(value)


class _Rate:
    """One learning rate: constant, per-step list, or schedule cell."""

    def __init__(self, owner: str, value: Any):
        if isinstance(value, paddle.Tensor):
            value = value.numpy().tolist() if value.ndim else float(value.numpy())
        if isinstance(value, LearningRateSchedule):
            self.schedule, self.rates = value, None
        elif isinstance(value, list | tuple):
            if not value:
                raise ValueError(f"For '{owner}', the 'learning_rate' list must not be empty.")
            self.schedule, self.rates = None, [_float32(v) for v in value]
        elif isinstance(value, int | float) and not isinstance(value, bool):
            self.schedule, self.rates = None, [_float32(value)]
        else:
            raise TypeError(
                f"For '{owner}', the 'learning_rate' must be a float, a list, a Tensor or a "
                f"LearningRateSchedule, but got {type(value).__name__}."
            )
        self.dynamic = self.schedule is not None or len(self.rates) > 1

    def at(self, step: int) -> float:
        if self.schedule is not None:
            return _float32(self.schedule(paddle.to_tensor(step, dtype="int32")).numpy())
        if step >= len(self.rates) and len(self.rates) > 1:
            raise ValueError(
                f"the learning-rate list has {len(self.rates)} steps; step {step} is past its end"
            )
        return self.rates[min(step, len(self.rates) - 1)]


class Optimizer:
    """Base of the optimizers: parameter groups, learning rates, weight decay and loss scale."""

    decoupled = False  # AdamWeightDecay applies the decay in its update

    def __init__(
        self, learning_rate: Any, parameters: Sequence, weight_decay: float = 0.0, loss_scale: float = 1.0
    ):
        owner = type(self).__name__
        items = list(parameters)
        if not items:
            raise ValueError(f"For '{owner}', the argument 'parameters' must not be empty.")
        default_rate, default_decay = _Rate(owner, learning_rate), _check_decay(owner, weight_decay)
        self.is_group = any(isinstance(p, dict) for p in items)
        if self.is_group:
            params, rates, decays = self._groups(owner, items, default_rate, default_decay)
            flags = [d > 0 for d in decays]
        else:
            params, rates, decays = items, [default_rate] * len(items), [default_decay] * len(items)
            flags = [
                bool(default_decay) and "beta" not in param_name(p) and "gamma" not in param_name(p)
                for p in items
            ]
        self.parameters = ParameterTuple(params)
        self._rates, self.decays, self.decay_flags = rates, decays, tuple(flags)
        self.learning_rate = learning_rate
        self.weight_decay = default_decay
        self.loss_scale = float(loss_scale)
        self.dynamic_lr = any(r.dynamic for r in rates)
        self.global_step = 0
        self._step_rates: dict[int, float] = {}

    @staticmethod
    def _groups(
        owner: str, items: list, default_rate: _Rate, default_decay: float
    ) -> tuple[list, list, list]:
        params, rates, decays, order = [], [], [], None
        for group in items:
            if not isinstance(group, dict):
                raise TypeError(
                    f"For '{owner}', when 'parameters' holds a dict, every item must be a dict, "
                    f"but got {type(group).__name__}."
                )
            unknown = sorted(set(group) - set(_GROUP_KEYS))
            if unknown:
                raise ValueError(
                    f"For '{owner}', the key of a parameter group must be one of {list(_GROUP_KEYS)}, "
                    f"but got {unknown[0]!r}."
                )
            if group.get("grad_centralization"):
                raise not_provided(f"{owner}(grad_centralization=True)")
            if "order_params" in group:
                order = list(group["order_params"])
                continue
            rate = _Rate(owner, group["lr"]) if "lr" in group else default_rate
            decay = _check_decay(owner, group["weight_decay"]) if "weight_decay" in group else default_decay
            for param in group["params"]:
                params.append(param)
                rates.append(rate)
                decays.append(decay)
        if order is None:
            return params, rates, decays
        index = {id(p): i for i, p in enumerate(params)}
        stray = [param_name(p) for p in order if id(p) not in index]
        if stray:
            raise ValueError(f"For '{owner}', the parameter {stray[0]!r} in 'order_params' is in no group.")
        picks = [index[id(p)] for p in order]
        return [params[i] for i in picks], [rates[i] for i in picks], [decays[i] for i in picks]

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes the layer's optimizers lack: MindSpore's Cell-based internals
        # that custom optimizers use (cls_name, assignadd, global_step_increase_tensor, ...).
        if name.startswith("__"):
            raise AttributeError(name)
        raise missing("mindspore.nn.Optimizer", name)

    @property
    def target(self) -> str:
        """Where the update runs (MindSpore: host or device); here always where Paddle runs it."""
        return getattr(self, "_target", "CPU")

    @target.setter
    def target(self, value: str) -> None:
        if value not in ("CPU", "Ascend", "GPU"):
            raise ValueError(f"The value must be 'CPU', 'Ascend' or 'GPU', but got {value!r}.")
        self._target = value

    def get_lr(self) -> Any:
        """The learning rate of this step (one per parameter when grouped), as MindSpore returns it."""
        if self.is_group:
            return tuple(
                paddle.to_tensor(self.lr_of(i), dtype="float32") for i in range(len(self.parameters))
            )
        return paddle.to_tensor(self.lr_of(0), dtype="float32")

    def lr_of(self, index: int) -> float:
        rate = self._rates[index]
        key = id(rate)
        if key not in self._step_rates:
            self._step_rates[key] = rate.at(self.global_step)
        return self._step_rates[key]

    def decay_of(self, index: int) -> float:
        return self.decays[index]

    def __call__(self, grads: Sequence[paddle.Tensor]) -> bool:
        if len(grads) != len(self.parameters):
            raise ValueError(
                f"{type(self).__name__}: got {len(grads)} gradients for {len(self.parameters)} parameters"
            )
        self._step_rates = {}
        with paddle.no_grad():
            for i, (param, grad) in enumerate(zip(self.parameters, grads, strict=True)):
                if not self.decoupled and self.decay_flags[i]:
                    grad = grad + param * (self.decays[i] * self.loss_scale)  # MindSpore scales it too
                if self.loss_scale != 1.0:
                    grad = grad / self.loss_scale
                paddle.assign(self.updated(i, param, grad), output=param)
        self.global_step += 1
        return True

    def state(self) -> list[tuple[str, list[paddle.Tensor]]]:
        """The per-parameter state as ``(MindSpore's prefix, one tensor per parameter)`` pairs: a
        checkpoint names them ``<prefix>.<parameter name>``."""
        return []

    def updated(self, index: int, param: paddle.Tensor, grad: paddle.Tensor) -> paddle.Tensor:
        raise NotImplementedError(f"{type(self).__name__} must define its update rule (updated)")
