"""Adagrad, RMSProp and Lamb with MindSpore's update rules and the names of their state.

Each keeps its state per parameter under MindSpore's prefixes (``accum``, ``mean_grad``,
``mean_square``, ``moment``, ``lamb_m``, ``lamb_v``: the names its checkpoint entries get).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import paddle

from ..._validate import not_provided
from .optimizer import Optimizer

__all__ = ["Adagrad", "RMSProp", "Lamb"]


def _float(owner: str, name: str, value: Any, low: float = 0.0, strict: bool = False) -> float:
    """MindSpore's ``check_value_type(float)`` then its range check, with its exception types."""
    if not isinstance(value, float):
        raise TypeError(f"For '{owner}', the type of '{name}' should be 'float', but got type "
                        f"'{type(value).__name__}'.")
    if value < low or (strict and value == low):
        sign = ">" if strict else ">="
        raise ValueError(f"For '{owner}', the '{name}' must be float and must {sign} {low:g}, but got "
                         f"'{value}' with type 'float'.")
    return value


def _filled(params: Sequence[paddle.Tensor], value: float) -> list[paddle.Tensor]:
    return [paddle.full_like(p, value) for p in params]


class Adagrad(Optimizer):
    """``nn.Adagrad(params, accum=0.1, learning_rate=0.001, update_slots=True, loss_scale=1.0,
    weight_decay=0.0)``.

    MindSpore's ApplyAdagrad (no epsilon): ``accum += grad^2``; ``param -= lr * grad /
    sqrt(accum)``. State: ``accum.<param>``, starting at ``accum``. ``update_slots=False`` is not
    provided: MindSpore documents a frozen ``accum``, but its 2.10 CPU kernel was recorded
    updating it anyway (same losses as ``True``), so which meaning to follow is unclear.
    """

    def __init__(self, params: Sequence, accum: float = 0.1, learning_rate: float = 0.001,
                 update_slots: bool = True, loss_scale: float = 1.0, weight_decay: float = 0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        _float("Adagrad", "accum", accum)
        if not isinstance(update_slots, bool):
            raise TypeError(f"For 'Adagrad', the type of 'update_slots' must be 'bool', but got "
                            f"'{type(update_slots).__name__}'.")
        if not update_slots:
            raise not_provided("nn.Adagrad(update_slots=False)", "MindSpore 2.10's CPU kernel updates "
                               "the accumulator anyway while its documentation freezes it; pass "
                               "update_slots=True")
        self.accum = _filled(self.parameters, accum)

    def state(self) -> list[tuple[str, list[paddle.Tensor]]]:
        return [("accum", self.accum)]

    def updated(self, index: int, param: paddle.Tensor, grad: paddle.Tensor) -> paddle.Tensor:
        self.accum[index] = self.accum[index] + grad * grad
        return param - grad * self.lr_of(index) / paddle.sqrt(self.accum[index])


class RMSProp(Optimizer):
    """``nn.RMSProp(params, learning_rate=0.1, decay=0.9, momentum=0.0, epsilon=1e-10,
    use_locking=False, centered=False, loss_scale=1.0, weight_decay=0.0)``.

    MindSpore's ApplyRMSProp: ``ms = decay * ms + (1 - decay) * grad^2``; ``moment = momentum *
    moment + lr * grad / sqrt(ms + eps)``; ``param -= moment``. Centered (ApplyCenteredRMSProp):
    also ``mg = decay * mg + (1 - decay) * grad`` and ``sqrt(ms - mg^2 + eps)``. State:
    ``mean_grad.<param>`` (centered only, zeros), ``mean_square.<param>`` (ones, as MindSpore
    initialises it) and ``moment.<param>`` (zeros).
    """

    def __init__(self, params: Sequence, learning_rate: float = 0.1, decay: float = 0.9,
                 momentum: float = 0.0, epsilon: float = 1e-10, use_locking: bool = False,
                 centered: bool = False, loss_scale: float = 1.0, weight_decay: float = 0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.decay = _float("RMSProp", "decay", decay)
        self.momentum = _float("RMSProp", "momentum", momentum)
        self.epsilon = _float("RMSProp", "epsilon", epsilon, strict=True)
        for name, flag in (("use_locking", use_locking), ("centered", centered)):
            if not isinstance(flag, bool):
                raise TypeError(f"For 'RMSProp', the type of '{name}' must be 'bool', but got "
                                f"'{type(flag).__name__}'.")
        self.centered = centered
        self.mean_grad = _filled(self.parameters, 0.0) if centered else None
        self.mean_square = _filled(self.parameters, 1.0)
        self.moment = _filled(self.parameters, 0.0)

    def state(self) -> list[tuple[str, list[paddle.Tensor]]]:
        centered = [("mean_grad", self.mean_grad)] if self.centered else []
        return centered + [("mean_square", self.mean_square), ("moment", self.moment)]

    def updated(self, index: int, param: paddle.Tensor, grad: paddle.Tensor) -> paddle.Tensor:
        rho = self.decay
        square = self.mean_square[index] * rho + grad * grad * (1 - rho)
        self.mean_square[index] = square
        if self.centered:
            mean = self.mean_grad[index] * rho + grad * (1 - rho)
            self.mean_grad[index] = mean
            square = square - mean * mean
        step = grad * self.lr_of(index) / paddle.sqrt(square + self.epsilon)
        moment = self.moment[index] * self.momentum + step
        self.moment[index] = moment
        return param - moment


class Lamb(Optimizer):
    """``nn.Lamb(params, learning_rate, beta1=0.9, beta2=0.999, eps=1e-6, weight_decay=0.0)``.

    MindSpore's Lamb kernel, at step ``t`` (1 on the first call): Adam's moments with bias
    correction, ``update = m_hat / (sqrt(v_hat) + eps) + wd * param`` (wd for the parameters
    decay applies to), then the trust ratio ``||param|| / ||update||`` (1 when either norm is
    0): ``param -= lr * ratio * update``. State: ``lamb_m.<param>``, ``lamb_v.<param>``.
    """

    decoupled = True

    def __init__(self, params: Sequence, learning_rate: Any, beta1: float = 0.9, beta2: float = 0.999,
                 eps: float = 1e-6, weight_decay: float = 0.0):
        super().__init__(learning_rate, params, weight_decay)
        for name, value in (("beta1", beta1), ("beta2", beta2)):
            _float("Lamb", name, value)
            if not 0.0 < value < 1.0:
                raise ValueError(f"For 'Lamb', the '{name}' must be in range of (0.0, 1.0), but got {value} "
                                 f"with type 'float'.")
        self.beta1, self.beta2 = beta1, beta2
        self.eps = _float("Lamb", "eps", eps, strict=True)
        self.lamb_m = _filled(self.parameters, 0.0)
        self.lamb_v = _filled(self.parameters, 0.0)

    def state(self) -> list[tuple[str, list[paddle.Tensor]]]:
        return [("lamb_m", self.lamb_m), ("lamb_v", self.lamb_v)]

    def updated(self, index: int, param: paddle.Tensor, grad: paddle.Tensor) -> paddle.Tensor:
        step = self._steps + 1
        m = self.lamb_m[index] * self.beta1 + grad * (1 - self.beta1)
        v = self.lamb_v[index] * self.beta2 + grad * grad * (1 - self.beta2)
        self.lamb_m[index], self.lamb_v[index] = m, v
        m_hat = m / (1 - self.beta1 ** step)
        v_hat = v / (1 - self.beta2 ** step)
        update = m_hat / (paddle.sqrt(v_hat) + self.eps)
        if self._decay_on[index]:
            update = update + param * self.decay_of(index)
        w_norm, u_norm = paddle.linalg.norm(param), paddle.linalg.norm(update)
        ratio = paddle.where((w_norm > 0) & (u_norm > 0), w_norm / u_norm, paddle.ones_like(w_norm))
        return param - update * ratio * self.lr_of(index)
