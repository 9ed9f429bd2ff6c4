"""Loss and optimizers used by the ported training programs."""

from __future__ import annotations

from collections.abc import Sequence

import paddle
import paddle.nn.functional as F

from .._cell import Cell
from .._tensor import ParameterTuple
from .._validate import not_provided

__all__ = ["SoftmaxCrossEntropyWithLogits", "Momentum", "SGD"]


class SoftmaxCrossEntropyWithLogits(Cell):
    """``nn.SoftmaxCrossEntropyWithLogits(sparse=False, reduction='none')``."""

    def __init__(self, sparse: bool = False, reduction: str = "none"):
        super().__init__()
        if reduction not in ("none", "mean", "sum"):
            raise ValueError(f"For 'SoftmaxCrossEntropyWithLogits', the 'reduction' must be in "
                             f"['mean', 'sum', 'none'], but got {reduction!r}.")
        self.sparse, self.reduction = sparse, reduction

    def construct(self, logits: paddle.Tensor, labels: paddle.Tensor) -> paddle.Tensor:
        if self.sparse:
            labels = paddle.unsqueeze(labels.astype("int64"), -1)
        loss = F.cross_entropy(logits, labels, soft_label=not self.sparse, reduction=self.reduction)
        return paddle.squeeze(loss, -1) if self.reduction == "none" and loss.ndim > 1 else loss


class _Optimizer:
    """Functional optimizer: ``optimizer(grads)`` updates ``optimizer.parameters`` in place."""

    def __init__(self, params: Sequence, learning_rate: float, weight_decay: float, loss_scale: float):
        if isinstance(learning_rate, bool) or not isinstance(learning_rate, int | float):
            raise not_provided("a learning-rate schedule or Tensor learning rate", "pass a float")
        if weight_decay:
            raise not_provided("optimizer weight_decay", "MindSpore filters it by parameter name, which "
                               "Paddle names do not carry; pass weight_decay=0.0")
        self.parameters = ParameterTuple(params)
        self.learning_rate = float(learning_rate)
        self.loss_scale = float(loss_scale)

    def __call__(self, grads: Sequence[paddle.Tensor]) -> bool:
        if len(grads) != len(self.parameters):
            raise ValueError(f"the optimizer got {len(grads)} gradients for "
                             f"{len(self.parameters)} parameters")
        with paddle.no_grad():
            for i, (param, grad) in enumerate(zip(self.parameters, grads, strict=True)):
                if self.loss_scale != 1.0:
                    grad = grad / self.loss_scale
                paddle.assign(self.updated(i, param, grad), output=param)
        return True

    def updated(self, index: int, param: paddle.Tensor, grad: paddle.Tensor) -> paddle.Tensor:
        raise NotImplementedError


class Momentum(_Optimizer):
    """``nn.Momentum(params, learning_rate, momentum, weight_decay=0.0, loss_scale=1.0, use_nesterov=False)``.

    MindSpore's ApplyMomentum: ``accum = momentum * accum + grad``; ``param -= lr * accum``
    (Nesterov: ``param -= lr * (grad + momentum * accum)``).
    """

    def __init__(self, params: Sequence, learning_rate: float, momentum: float, weight_decay: float = 0.0,
                 loss_scale: float = 1.0, use_nesterov: bool = False):
        super().__init__(params, learning_rate, weight_decay, loss_scale)
        self.momentum, self.use_nesterov = float(momentum), use_nesterov
        self.moments = [paddle.zeros_like(p) for p in self.parameters]

    def updated(self, index: int, param: paddle.Tensor, grad: paddle.Tensor) -> paddle.Tensor:
        accum = self.moments[index] * self.momentum + grad
        self.moments[index] = accum
        step = grad + accum * self.momentum if self.use_nesterov else accum
        return param - step * self.learning_rate


class SGD(_Optimizer):
    """``nn.SGD(params, learning_rate=0.1, momentum=0.0, ...)`` without dampening or Nesterov."""

    def __init__(self, params: Sequence, learning_rate: float = 0.1, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
                 loss_scale: float = 1.0):
        if dampening or nesterov:
            raise not_provided("nn.SGD(dampening/nesterov)")
        super().__init__(params, learning_rate, weight_decay, loss_scale)
        self.inner = Momentum(self.parameters, learning_rate, momentum) if momentum else None

    def updated(self, index: int, param: paddle.Tensor, grad: paddle.Tensor) -> paddle.Tensor:
        if self.inner is not None:
            return self.inner.updated(index, param, grad)
        return param - grad * self.learning_rate
