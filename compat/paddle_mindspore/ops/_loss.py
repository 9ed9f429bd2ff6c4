"""KL divergence: ``ops.kl_div``, the ``ops.KLDivLoss`` primitive (MindSpore 2.10's meaning) and
the ``ops.log_softmax`` that feeds them."""

from __future__ import annotations

import paddle

from .._primitive import Primitive

__all__ = ["kl_div", "KLDivLoss", "check_kl_reduction", "log_softmax"]

_REDUCTIONS = ("none", "mean", "batchmean", "sum")


def check_kl_reduction(reduction: str) -> str:
    """MindSpore's text for a reduction outside ``none``, ``mean``, ``batchmean``, ``sum``."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"For 'KLDivLoss', the 'reduction' must be str and must be in "
                         f"'{list(_REDUCTIONS)}', but got '{reduction}'.")
    return reduction


def log_softmax(logits: paddle.Tensor, axis: int = -1) -> paddle.Tensor:
    """``ops.log_softmax(logits, axis=-1)``."""
    return paddle.nn.functional.log_softmax(logits, axis=axis)


def kl_div(logits: paddle.Tensor, labels: paddle.Tensor, reduction: str = "mean") -> paddle.Tensor:
    """``ops.kl_div(logits, labels, reduction='mean')``: ``labels * (log(labels) - logits)``
    elementwise (0 where ``labels`` is 0), then the mean over all elements, the sum, the sum
    divided by the first dimension (``batchmean``), or none."""
    check_kl_reduction(reduction)
    positive = labels > 0
    safe = paddle.where(positive, labels, paddle.ones_like(labels))
    loss = paddle.where(positive, labels * (paddle.log(safe) - logits), paddle.zeros_like(logits))
    if reduction == "none":
        return loss
    total = paddle.sum(loss)
    if reduction == "sum":
        return total
    return total / (logits.shape[0] if reduction == "batchmean" else loss.numel().astype(loss.dtype))


class KLDivLoss(Primitive):
    """``ops.KLDivLoss(reduction='mean')(logits, labels)``: :func:`kl_div`."""

    def setup(self, reduction: str = "mean") -> None:
        self.reduction = check_kl_reduction(reduction)

    def compute(self, logits: paddle.Tensor, labels: paddle.Tensor) -> paddle.Tensor:
        return kl_div(logits, labels, self.reduction)
