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
- MindSpore's attributes, for optimizers that define ``construct`` on this base (mindcv's):
  ``global_step`` (an int32 Parameter), ``learning_rate`` (``_lr_cells.py``), ``weight_decay``
  (float32 Tensors, times the loss scale), ``decay_flags``, ``is_group_lr``, ``dynamic_lr``,
  ``reciprocal_scale``, ``optim_filter``; such an optimizer's call runs its ``construct`` without
  recording gradients, and its state is the Parameters it holds (``_cell_protocol.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import paddle

from ..._surface.data import param_name
from ..._tensor import Parameter, ParameterTuple
from ..._validate import missing, not_provided
from ...ops._graph import AssignAdd
from .._learning_rate import LearningRateSchedule
from ._cell_protocol import OptimizerCell
from ._lr_cells import build_rate, group_rates, is_dynamic

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


class Optimizer(OptimizerCell):
    """Base of the optimizers: parameter groups, learning rates, weight decay and loss scale."""

    decoupled = False  # AdamWeightDecay applies the decay in its update

    def __init__(
        self, learning_rate: Any, parameters: Sequence, weight_decay: float = 0.0, loss_scale: float = 1.0
    ):
        self._start_cell()
        owner = type(self).__name__
        items = list(parameters)
        if not items:
            raise ValueError(f"For '{owner}', the argument 'parameters' must not be empty.")
        default_rate, default_decay = _Rate(owner, learning_rate), _check_decay(owner, weight_decay)
        self.is_group = any(isinstance(p, dict) for p in items)
        self.loss_scale = float(loss_scale)
        self.global_step = Parameter(paddle.zeros([1], "int32"), "global_step", requires_grad=False)
        if self.is_group:
            params, rates, decays, lr_groups = self._groups(owner, items, default_rate, default_decay)
            flags = [d > 0 for d in decays]
        else:
            params, rates, decays = items, [default_rate] * len(items), [default_decay] * len(items)
            lr_groups = [None] * len(items)
            flags = ["beta" not in param_name(p) and "gamma" not in param_name(p) for p in items]
        self.is_group_lr = any(g is not None for g in lr_groups)
        self.dynamic_lr = is_dynamic(learning_rate) or any(
            is_dynamic(g["lr"]) for g in items if isinstance(g, dict) and "lr" in g
        )
        self.learning_rate = self._ms_rates(learning_rate, items, lr_groups)
        self.parameters = ParameterTuple(params)
        self._parameters = self.parameters
        self._rates, self.decays = rates, decays
        self.decay_flags = tuple(flags)
        self._decay_on = tuple(f and d > 0 for f, d in zip(flags, decays, strict=True))
        self._learning_rate_arg = learning_rate
        self._ms_decay_attributes(decays)
        self._steps = 0
        self._step_rates: dict[int, float] = {}

    def _ms_rates(self, learning_rate: Any, items: list, lr_groups: list) -> Any:
        """``learning_rate`` as MindSpore holds it (``_lr_cells.py``)."""
        if not self.is_group_lr:
            return build_rate(learning_rate, "learning_rate")
        default = build_rate(learning_rate, "learning_rate", as_cell=self.dynamic_lr)
        built: dict[int, Any] = {}
        for g in lr_groups:
            if g is not None and g not in built:
                built[g] = build_rate(items[g]["lr"], f"learning_rate_group_{g}", as_cell=self.dynamic_lr)
        return group_rates([default if g is None else built[g] for g in lr_groups], self.dynamic_lr)

    def _ms_decay_attributes(self, decays: list[float]) -> None:
        """MindSpore's weight-decay and loss-scale attributes (float32 Tensors, decay times scale)."""

        def f32(value: float) -> paddle.Tensor:
            return paddle.to_tensor(np.float32(value), dtype="float32")

        scaled = [d * self.loss_scale for d in decays]
        self.weight_decay = tuple(f32(d) for d in scaled) if self.is_group else f32(scaled[0])
        self.exec_weight_decay = any(self.decay_flags) if self.is_group else scaled[0] > 0
        self.dynamic_weight_decay = False
        self.reciprocal_scale = f32(1.0 / self.loss_scale)
        self.need_scale = self.loss_scale != 1.0
        self.global_step_increase_tensor = paddle.to_tensor([1], dtype="int32")
        self.param_length = len(self.parameters)
        self.optim_filter = (True,) * self.param_length
        self.use_parallel = False
        self.grad_centralization = False
        self.assignadd = AssignAdd()

    @staticmethod
    def _groups(
        owner: str, items: list, default_rate: _Rate, default_decay: float
    ) -> tuple[list, list, list, list]:
        params, rates, decays, lr_groups, order = [], [], [], [], None
        for index, group in enumerate(items):
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
                lr_groups.append(index if "lr" in group else None)
        if order is None:
            return params, rates, decays, lr_groups
        index = {id(p): i for i, p in enumerate(params)}
        stray = [param_name(p) for p in order if id(p) not in index]
        if stray:
            raise ValueError(f"For '{owner}', the parameter {stray[0]!r} in 'order_params' is in no group.")
        picks = [index[id(p)] for p in order]
        return tuple([values[i] for i in picks] for values in (params, rates, decays, lr_groups))

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
        """MindSpore's ``get_lr``: ``learning_rate`` itself when constant, else the rate (a tuple
        with per-group rates) at ``global_step``."""
        if not self.dynamic_lr:
            return self.learning_rate
        if self.is_group_lr:
            return tuple(rate(self.global_step).reshape(()) for rate in self.learning_rate)
        return self.learning_rate(self.global_step).reshape(())

    def lr_of(self, index: int) -> float:
        """The rate of parameter ``index`` this step. A constant rate is read from its Parameter,
        as MindSpore does, so ``ops.assign(optimizer.learning_rate, new)`` changes it."""
        if not self.dynamic_lr:
            rate: Any = self.learning_rate[index] if self.is_group_lr else self.learning_rate
            key = id(rate)
            if key not in self._step_rates:
                self._step_rates[key] = float(rate.numpy())
            return self._step_rates[key]
        rate = self._rates[index]
        key = id(rate)
        if key not in self._step_rates:
            self._step_rates[key] = rate.at(self._steps)
        return self._step_rates[key]

    def decay_of(self, index: int) -> float:
        return self.decays[index]

    def __call__(self, grads: Sequence[paddle.Tensor]) -> Any:
        if len(grads) != len(self.parameters):
            raise ValueError(
                f"{type(self).__name__}: got {len(grads)} gradients for {len(self.parameters)} parameters"
            )
        if self.defines_construct:
            with paddle.no_grad():  # an optimizer written on MindSpore's Cell interface
                return self.construct(tuple(grads))
        self._step_rates = {}
        with paddle.no_grad():
            for i, (param, grad) in enumerate(zip(self.parameters, grads, strict=True)):
                if not self.decoupled and self._decay_on[i]:
                    grad = grad + param * (self.decays[i] * self.loss_scale)  # MindSpore scales it too
                if self.loss_scale != 1.0:
                    grad = grad / self.loss_scale
                paddle.assign(self.updated(i, param, grad), output=param)
            self._steps += 1
            paddle.assign(paddle.full([1], self._steps, "int32"), output=self.global_step)
        return True

    @property
    def defines_construct(self) -> bool:
        """Whether this optimizer is written on MindSpore's Cell interface (its own ``construct``,
        its state in Parameters) rather than the layer's ``updated`` rule."""
        return type(self).construct is not Optimizer.construct

    def construct(self, gradients: tuple) -> Any:
        """Overridden by optimizers written on MindSpore's interface; the layer's own optimizers
        give ``updated`` instead."""
        raise NotImplementedError(f"{type(self).__name__} must define construct or updated")

    def checkpoint_learning_rate(self) -> np.ndarray:
        """The ``learning_rate`` entry the layer writes into a checkpoint: the rate(s) given."""
        return np.array(self._learning_rate_arg, np.float32)

    def state(self) -> list[tuple[str, list[paddle.Tensor]]]:
        """The per-parameter state as ``(MindSpore's prefix, one tensor per parameter)`` pairs: a
        checkpoint names them ``<prefix>.<parameter name>``."""
        return []

    def scalar_state(self) -> list[tuple[str, np.ndarray]]:
        """State entries that are not per parameter (``nn.Momentum``'s and ``nn.SGD``'s float32
        ``momentum``), written after the parameters, before ``state()``'s."""
        return []

    def updated(self, index: int, param: paddle.Tensor, grad: paddle.Tensor) -> paddle.Tensor:
        raise NotImplementedError(f"{type(self).__name__} must define its update rule (updated)")
