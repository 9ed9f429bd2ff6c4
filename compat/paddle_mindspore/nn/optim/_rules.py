"""Optimizers with MindSpore's update rules: SGD, Momentum, Adam, AdamWeightDecay.

The shared machinery (parameter groups, learning rates, weight decay, loss scale) is
``Optimizer`` in ``optimizer.py``; each class here gives its update rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import paddle

from ..._validate import not_provided
from .optimizer import Optimizer

__all__ = ["SGD", "Momentum", "Adam", "AdamWeightDecay"]


class Momentum(Optimizer):
    """``nn.Momentum(params, learning_rate, momentum, weight_decay=0.0, loss_scale=1.0, use_nesterov=False)``.

    MindSpore's ApplyMomentum: ``accum = momentum * accum + grad``; ``param -= lr * accum``.
    ``use_nesterov=True`` is not provided: MindSpore documents ``param -= lr * (grad + momentum *
    accum)``, but its 2.10 CPU kernel was recorded giving the plain update (same losses with and
    without it), so which meaning to follow is unclear.
    """

    def __init__(self, params: Sequence, learning_rate: float, momentum: float, weight_decay: float = 0.0,
                 loss_scale: float = 1.0, use_nesterov: bool = False):
        if use_nesterov:
            raise not_provided("nn.Momentum(use_nesterov=True)", "MindSpore 2.10's CPU kernel ignores it "
                               "while its documentation gives the Nesterov update; pass use_nesterov=False")
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.momentum = float(momentum)
        self.moments = [paddle.zeros_like(p) for p in self.parameters]

    def state(self) -> list[tuple[str, list[paddle.Tensor]]]:
        return [("moments", self.moments)]

    def scalar_state(self) -> list[tuple[str, np.ndarray]]:
        return [("momentum", np.array(self.momentum, np.float32))]

    def updated(self, index: int, param: paddle.Tensor, grad: paddle.Tensor) -> paddle.Tensor:
        accum = self.moments[index] * self.momentum + grad
        self.moments[index] = accum
        return param - accum * self.lr_of(index)


class SGD(Optimizer):
    """``nn.SGD(params, learning_rate=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
    loss_scale=1.0)``.

    MindSpore's SGD kernel (recorded, compat/record/ms_cases_mindcv.py): without momentum
    ``param -= lr * grad``; with it, ``accum = grad`` on a parameter's first step (its ``stat``
    is 1, then 0), afterwards ``accum = momentum * accum + (1 - dampening) * grad``, and
    ``param -= lr * accum`` (Nesterov: ``lr * (grad + momentum * accum)``). Its state is
    ``momentum``, ``accum.<name>`` (zeros) and ``stat.<name>`` (ones), as MindSpore names it.
    """

    def __init__(self, params: Sequence, learning_rate: float = 0.1, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
                 loss_scale: float = 1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.momentum = _non_negative("momentum", momentum)
        self.dampening = _non_negative("dampening", dampening)
        if not isinstance(nesterov, bool):
            raise TypeError(f"For 'SGD', the 'nesterov' must be bool, but got {type(nesterov).__name__}.")
        if nesterov and (self.momentum <= 0.0 or self.dampening != 0.0):
            raise ValueError(f"For 'SGD', if 'nesterov' is true, 'momentum' must be > 0.0 and 'dampening' "
                             f"must equal to 0.0, but got 'momentum' {self.momentum}, 'dampening' "
                             f"{self.dampening}.")
        self.nesterov = nesterov
        self.accum = [paddle.zeros_like(p) for p in self.parameters]
        self.stat = [paddle.ones_like(p) for p in self.parameters]

    def state(self) -> list[tuple[str, list[paddle.Tensor]]]:
        return [("accum", self.accum), ("stat", self.stat)]

    def scalar_state(self) -> list[tuple[str, np.ndarray]]:
        return [("momentum", np.array(self.momentum, np.float32))]

    def updated(self, index: int, param: paddle.Tensor, grad: paddle.Tensor) -> paddle.Tensor:
        if self.momentum <= 0.0:
            return param - grad * self.lr_of(index)
        first = self.stat[index] > 0
        later = self.accum[index] * self.momentum + grad * (1.0 - self.dampening)
        accum = paddle.where(first, grad, later)
        self.accum[index], self.stat[index] = accum, paddle.zeros_like(self.stat[index])
        step = grad + accum * self.momentum if self.nesterov else accum
        return param - step * self.lr_of(index)


def _non_negative(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"For 'SGD', the argument '{name}' must be float type, but got {type(value)}.")
    if value < 0.0:
        raise ValueError(f"For 'SGD', the argument '{name}' must be at least 0.0, but got {value}.")
    return float(value)


class _Moments(Optimizer):
    def __init__(self, params: Sequence, learning_rate: float, beta1: float, beta2: float, eps: float,
                 weight_decay: float, loss_scale: float = 1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.beta1, self.beta2, self.eps = float(beta1), float(beta2), float(eps)
        self.moments1 = [paddle.zeros_like(p) for p in self.parameters]
        self.moments2 = [paddle.zeros_like(p) for p in self.parameters]

    def moments(self, index: int, grad: paddle.Tensor) -> tuple[paddle.Tensor, paddle.Tensor]:
        m = self.moments1[index] * self.beta1 + grad * (1 - self.beta1)
        v = self.moments2[index] * self.beta2 + paddle.square(grad) * (1 - self.beta2)
        self.moments1[index], self.moments2[index] = m, v
        return m, v


class Adam(_Moments):
    """``nn.Adam(params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, use_locking=False,
    use_nesterov=False, weight_decay=0.0, loss_scale=1.0)``.

    MindSpore's Adam kernel: ``lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)``;
    ``param -= lr_t * m / (sqrt(v) + eps)``.
    """

    def __init__(self, params: Sequence, learning_rate: float = 1e-3, beta1: float = 0.9,
                 beta2: float = 0.999,
                 eps: float = 1e-8, use_locking: bool = False, use_nesterov: bool = False,
                 weight_decay: float = 0.0, loss_scale: float = 1.0, use_amsgrad: bool = False):
        if use_amsgrad:
            raise not_provided("nn.Adam(use_amsgrad=True)")
        super().__init__(params, learning_rate, beta1, beta2, eps, weight_decay, loss_scale)
        self.use_nesterov = use_nesterov
        self.step = 0

    def __call__(self, grads: Sequence[paddle.Tensor]) -> bool:
        self.step += 1
        return super().__call__(grads)

    def updated(self, index: int, param: paddle.Tensor, grad: paddle.Tensor) -> paddle.Tensor:
        m, v = self.moments(index, grad)
        lr_t = self.lr_of(index) * (1 - self.beta2 ** self.step) ** 0.5 / (1 - self.beta1 ** self.step)
        if self.use_nesterov:
            m = m * self.beta1 + grad * (1 - self.beta1)
        return param - m * lr_t / (paddle.sqrt(v) + self.eps)


class AdamWeightDecay(_Moments):
    """``nn.AdamWeightDecay(params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-6, weight_decay=0.0)``.

    MindSpore's rule, without bias correction: ``update = m / (sqrt(v) + eps) (+ wd * param)``;
    ``param -= lr * update``.
    """

    decoupled = True

    def __init__(self, params: Sequence, learning_rate: float = 1e-3, beta1: float = 0.9,
                 beta2: float = 0.999,
                 eps: float = 1e-6, weight_decay: float = 0.0):
        super().__init__(params, learning_rate, beta1, beta2, eps, weight_decay)

    def updated(self, index: int, param: paddle.Tensor, grad: paddle.Tensor) -> paddle.Tensor:
        m, v = self.moments(index, grad)
        update = m / (paddle.sqrt(v) + self.eps)
        if self._decay_on[index]:
            update = update + param * self.decay_of(index)
        return param - update * self.lr_of(index)
