"""Dropout returning its mask, as MindSpore's ``ops.Dropout`` does.

Paddle's dropout kernel keeps its mask internal, so the mask is drawn here from Paddle's
generator (``rand < keep_prob``) and applied by a small ``PyLayer`` whose backward is
``dy * mask / keep_prob``.  Only the mask is saved for backward (like MindSpore's
``DropoutGrad``), through the saved-tensor hooks, so recompute regions handle it like any other
saved tensor.  The mask is an *input* of the PyLayer, not an output: Paddle keeps a PyLayer's
outputs alive with its graph node, which would hold every mask until backward.
"""

from __future__ import annotations

import paddle
from paddle.autograd import PyLayer

__all__ = ["dropout_with_mask"]


class _ApplyMask(PyLayer):
    @staticmethod
    def forward(ctx, x: paddle.Tensor, mask: paddle.Tensor, scale: float) -> paddle.Tensor:
        ctx.save_for_backward(mask)
        ctx.scale = scale
        return x * mask * scale

    @staticmethod
    def backward(ctx, grad_out: paddle.Tensor) -> tuple:
        (mask,) = ctx.saved_tensor()
        return grad_out * mask * ctx.scale, None


def dropout_with_mask(x: paddle.Tensor, keep_prob: float) -> tuple[paddle.Tensor, paddle.Tensor]:
    """``(x * mask / keep_prob, mask)`` with ``mask`` of x's shape and dtype (1 = kept)."""
    mask = (paddle.rand(x.shape, dtype=x.dtype) < keep_prob).astype(x.dtype)
    scale = 1.0 / keep_prob
    if not paddle.is_grad_enabled() or x.stop_gradient:
        return x * mask * scale, mask
    return _ApplyMask.apply(x, mask, scale), mask
