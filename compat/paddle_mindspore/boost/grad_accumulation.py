"""``mindspore.boost.grad_accumulation``: ``GradientAccumulation`` and its two graph functions.

MindSpore's semantics (``mindspore/boost/grad_accumulation.py``): each call adds
``grad / max_accumulation_step`` to a zero-initialised accumulator per parameter
(``grad_accumulation.<param>``); every ``max_accumulation_step``-th call the optimizer runs on
the accumulated gradients and the accumulators are cleared.
"""

from __future__ import annotations

from typing import Any

import paddle

from .._cell import Cell
from .._tensor import Parameter
from .._validate import missing as _missing
from ..ops._graph import HyperMap, MultitypeFuncGraph, assign, partial

__all__ = ["GradientAccumulation", "gradient_accumulation_op", "gradient_clear_op"]

gradient_accumulation_op = MultitypeFuncGraph("gradient_accumulation_op")
gradient_clear_op = MultitypeFuncGraph("gradient_clear_op")


@gradient_accumulation_op.register("Int64", "Tensor", "Tensor")
def _accumulate(accumulation_step: int, cumulative_grad: paddle.Tensor, grad: paddle.Tensor) -> paddle.Tensor:
    return assign(cumulative_grad, cumulative_grad + grad.detach() / accumulation_step)


@gradient_clear_op.register("Tensor")
def _clear(cumulative_grad: paddle.Tensor) -> paddle.Tensor:
    return assign(cumulative_grad, paddle.zeros_like(cumulative_grad))


class GradientAccumulation(Cell):
    """``boost.GradientAccumulation(max_accumulation_step, optimizer)``: ``cell(loss, grads)``
    accumulates and, every ``max_accumulation_step`` calls, updates; returns ``loss``."""

    def __init__(self, max_accumulation_step: int, optimizer: Any):
        super().__init__()
        self._max_accumulation_step = max_accumulation_step
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        self.hyper_map = HyperMap()
        self._grad_accumulation = self.weights.clone(prefix="grad_accumulation", init=0)
        self._accumulation_step = Parameter(paddle.to_tensor(0, dtype="int32"), name="accumulation_step",
                                            requires_grad=False)

    def construct(self, loss: paddle.Tensor, grads: Any) -> paddle.Tensor:
        accumulate = partial(gradient_accumulation_op, self._max_accumulation_step)
        self.hyper_map(accumulate, self._grad_accumulation, tuple(grads))
        step = int(self._accumulation_step) + 1
        if step >= self._max_accumulation_step:
            self.optimizer(tuple(self._grad_accumulation))
            step = 0
        assign(self._accumulation_step, step)
        if step == 0:
            self.hyper_map(partial(gradient_clear_op), self._grad_accumulation)
        return loss


def __getattr__(name: str):
    raise _missing("mindspore.boost.grad_accumulation", name)
