"""Optimizers with MindSpore's update rules: SGD, Momentum, Adam, AdamWeightDecay.

``optimizer(grads)`` updates ``optimizer.parameters`` in place (the gradients in their order),
as MindSpore's optimizer cells do. Shared rules of MindSpore's ``Optimizer`` (non-grouped
parameters): ``weight_decay`` applies to every parameter whose *name* contains neither
``'beta'`` nor ``'gamma'`` (LayerNorm/BatchNorm parameters are left out; names are MindSpore's,
see ``_cell_names.py``); SGD, Momentum and Adam add it to the gradient, multiplied by
``loss_scale`` as MindSpore does (``g + wd * loss_scale * p``), then divide by ``loss_scale``;
AdamWeightDecay adds ``wd * p`` to its update instead.
"""

from __future__ import annotations

from collections.abc import Sequence

import paddle

from .._tensor import ParameterTuple
from .._surface.data import param_name
from .._validate import not_provided

__all__ = ["Optimizer", "SGD", "Momentum", "Adam", "AdamWeightDecay"]


def _decays(param: paddle.Tensor) -> bool:
    name = param_name(param)
    return "beta" not in name and "gamma" not in name


class Optimizer:
    """Base of the optimizers: parameters, learning rate, weight decay and loss scale."""

    decoupled = False  # AdamWeightDecay applies the decay in its update

    def __init__(self, learning_rate: float, parameters: Sequence, weight_decay: float = 0.0,
                 loss_scale: float = 1.0):
        params = list(parameters)
        if any(isinstance(p, dict) for p in params):
            raise not_provided("grouped optimizer parameters (a list of dicts)", "pass a list of Parameters")
        if isinstance(learning_rate, bool) or not isinstance(learning_rate, int | float):
            raise not_provided("a learning-rate schedule or Tensor learning rate", "pass a float")
        if isinstance(weight_decay, bool) or not isinstance(weight_decay, int | float) or weight_decay < 0:
            raise TypeError(f"For '{type(self).__name__}', 'weight_decay' must be a float >= 0, "
                            f"but got {weight_decay!r}.")
        self.parameters = ParameterTuple(params)
        self.learning_rate = float(learning_rate)
        self.weight_decay = float(weight_decay)
        self.loss_scale = float(loss_scale)
        self.decay_flags = tuple(_decays(p) for p in self.parameters)

    def __call__(self, grads: Sequence[paddle.Tensor]) -> bool:
        if len(grads) != len(self.parameters):
            raise ValueError(f"{type(self).__name__}: got {len(grads)} gradients for "
                             f"{len(self.parameters)} parameters")
        with paddle.no_grad():
            for i, (param, grad) in enumerate(zip(self.parameters, grads, strict=True)):
                if self.weight_decay and not self.decoupled and self.decay_flags[i]:
                    grad = grad + param * (self.weight_decay * self.loss_scale)  # MindSpore scales it too
                if self.loss_scale != 1.0:
                    grad = grad / self.loss_scale
                paddle.assign(self.updated(i, param, grad), output=param)
        return True

    def updated(self, index: int, param: paddle.Tensor, grad: paddle.Tensor) -> paddle.Tensor:
        raise NotImplementedError


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

    def updated(self, index: int, param: paddle.Tensor, grad: paddle.Tensor) -> paddle.Tensor:
        accum = self.moments[index] * self.momentum + grad
        self.moments[index] = accum
        return param - accum * self.learning_rate


class SGD(Optimizer):
    """``nn.SGD(params, learning_rate=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
    loss_scale=1.0)``; ``dampening`` and ``nesterov`` are not provided."""

    def __init__(self, params: Sequence, learning_rate: float = 0.1, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
                 loss_scale: float = 1.0):
        if dampening:
            raise not_provided("nn.SGD(dampening != 0)")
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        if nesterov:
            raise not_provided("nn.SGD(nesterov=True)")
        self.inner = Momentum(self.parameters, learning_rate, momentum) if momentum else None

    def updated(self, index: int, param: paddle.Tensor, grad: paddle.Tensor) -> paddle.Tensor:
        if self.inner is not None:
            return self.inner.updated(index, param, grad)
        return param - grad * self.learning_rate


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
        lr_t = self.learning_rate * (1 - self.beta2 ** self.step) ** 0.5 / (1 - self.beta1 ** self.step)
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
        if self.weight_decay and self.decay_flags[index]:
            update = update + param * self.weight_decay
        return param - update * self.learning_rate
