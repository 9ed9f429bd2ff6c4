"""A Cell's own ``bprop``: MindSpore's custom backward for a Cell, honoured in PyNative mode.

NOTE [ Custom bprop ]
A Cell that defines ``bprop(self, *inputs, out, dout)`` replaces autodiff through its
``construct``: MindSpore runs ``construct`` for the value and, in backward, calls ``bprop``
with the inputs, the output and the output's gradient (a tuple for a tuple output, zeros for
outputs nothing used), and takes its return value as the inputs' gradients. mindformers'
cross-entropy loss is built this way (``_LogSoftmax`` / ``_NLLLoss``). Here the call is a Paddle
``PyLayer`` whose backward calls ``bprop`` the same way; the inputs that need no gradient get
none. Parameters inside such a Cell would get no gradient in MindSpore either way; the layer
refuses a Cell with trainable parameters rather than guess.
"""

from __future__ import annotations

from typing import Any

import paddle
from paddle.autograd import PyLayer

from ._validate import not_provided

__all__ = ["has_bprop", "call_with_bprop"]


def has_bprop(cell: Any) -> bool:
    return callable(getattr(type(cell), "bprop", None))


class _CustomBprop(PyLayer):
    @staticmethod
    def forward(ctx, cell, *args):
        out = cell.construct(*args)
        ctx.cell, ctx.args, ctx.out = cell, args, out
        return out

    @staticmethod
    def backward(ctx, *douts):
        outs = ctx.out if isinstance(ctx.out, tuple) else (ctx.out,)
        douts = tuple(paddle.zeros_like(o) if d is None else d for d, o in zip(douts, outs, strict=True))
        dout = douts if isinstance(ctx.out, tuple) else douts[0]
        grads = ctx.cell.bprop(*ctx.args, ctx.out, dout)
        grads = grads if isinstance(grads, tuple) else (grads,)
        tensors = [(a, g) for a, g in zip(ctx.args, grads, strict=False) if isinstance(a, paddle.Tensor)]
        return tuple(None if a.stop_gradient else g for a, g in tensors)


def call_with_bprop(cell: Any, args: tuple, kwargs: dict) -> Any:
    """``cell(*args)`` with ``cell.bprop`` as its backward (NOTE [ Custom bprop ])."""
    if kwargs:
        raise not_provided(f"{type(cell).__name__}(...) with keyword inputs and a custom bprop")
    if any(not p.stop_gradient for p in cell.parameters()):
        raise not_provided(f"{type(cell).__name__}.bprop on a Cell with trainable parameters")
    if not paddle.is_grad_enabled() or all(
            a.stop_gradient for a in args if isinstance(a, paddle.Tensor)):
        return cell.construct(*args)
    return _CustomBprop.apply(cell, *args)
