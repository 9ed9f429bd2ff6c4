"""Training wrappers: ``nn.WithLossCell`` and ``nn.TrainOneStepCell``."""

from __future__ import annotations

from typing import Any

import paddle

from .._cell import Cell
from .._forward_reuse import set_grad
from .._grad import GradOperation, differentiate
from .._surface.data import param_name

__all__ = ["WithLossCell", "WithEvalCell", "TrainOneStepCell"]


class WithLossCell(Cell):
    """``nn.WithLossCell(backbone, loss_fn)``: ``loss_fn(backbone(data), label)``.

    Like MindSpore's, it does not prefix the parameter names of the backbone (``auto_prefix=False``).
    """

    def __init__(self, backbone: paddle.nn.Layer, loss_fn: paddle.nn.Layer):
        super().__init__(auto_prefix=False)
        self._backbone = backbone
        self._loss_fn = loss_fn

    @property
    def backbone_network(self) -> paddle.nn.Layer:
        return self._backbone

    def construct(self, data: paddle.Tensor, label: paddle.Tensor) -> paddle.Tensor:
        return self._loss_fn(self._backbone(data), label)


class WithEvalCell(Cell):
    """``nn.WithEvalCell(network, loss_fn, add_cast_fp32=False)``: ``(loss, outputs, label)`` with
    ``outputs = network(data)`` (with ``add_cast_fp32``, outputs and a float label cast to
    float32). Like MindSpore's, it does not rename the network's parameters (``auto_prefix=False``;
    mindcv builds one over the network it trains, whose checkpoints keep the plain names); its
    ``parameters_and_names()`` paths start with ``_network.``."""

    def __init__(self, network: paddle.nn.Layer, loss_fn: paddle.nn.Layer, add_cast_fp32: bool = False):
        super().__init__(auto_prefix=False)
        self._network = network
        self._loss_fn = loss_fn
        self.add_cast_fp32 = add_cast_fp32

    def construct(self, data: paddle.Tensor, label: paddle.Tensor) -> tuple:
        outputs = self._network(data)
        if self.add_cast_fp32:
            label = label.astype("float32") if label.is_floating_point() else label
            outputs = outputs.astype("float32")
        return self._loss_fn(outputs, label), outputs, label


class TrainOneStepCell(Cell):
    """``nn.TrainOneStepCell(network, optimizer, sens=None, return_grad=False)``.

    One call: the loss of ``network(*inputs)``, the gradients of ``optimizer.parameters``
    (the loss's gradient seeded with ``sens``, 1.0 by default), the optimizer's update; returns
    the loss, and with ``return_grad=True`` also the gradients as a dict keyed by parameter
    name, as MindSpore 2.10 does.
    """

    def __init__(self, network: paddle.nn.Layer, optimizer: Any, sens: float | None = None,
                 return_grad: bool = False):
        super().__init__(auto_prefix=False)
        self.network = network
        set_grad(network)  # as MindSpore: a subclass's grad over it reuses its forward
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        self.sens = 1.0 if sens is None else float(sens)
        self.return_grad = return_grad
        self.grad = GradOperation(get_by_list=True, sens_param=True)  # what subclasses call, as in MindSpore

    @staticmethod
    def grad_reducer(grads: Any) -> Any:
        """The gradients unchanged: one device, no reduction (MindSpore's ``Identity`` reducer)."""
        return grads

    def construct(self, *inputs: Any) -> Any:
        losses = []

        def forward(*args: Any) -> paddle.Tensor:
            losses.append(self.network(*args))
            return losses[0] if self.sens == 1.0 else losses[0] * self.sens

        _, _, grads = differentiate(forward, inputs, {}, (), list(self.weights))
        self.optimizer(grads)
        loss = losses[0].detach()
        if not self.return_grad:
            return loss
        return loss, {param_name(p): g for p, g in zip(self.weights, grads, strict=True)}
