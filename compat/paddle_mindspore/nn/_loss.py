"""Loss cells: LossBase, MSELoss, L1Loss, CrossEntropyLoss, SoftmaxCrossEntropyWithLogits, KLDivLoss."""

from __future__ import annotations

import paddle
import paddle.nn.functional as F

from .._cell import Cell
from ..ops._loss import check_kl_reduction, kl_div

__all__ = ["LossBase", "MSELoss", "L1Loss", "CrossEntropyLoss", "SoftmaxCrossEntropyWithLogits",
           "KLDivLoss"]

_REDUCTIONS = ("none", "mean", "sum")


def _reduction(op: str, reduction: str) -> str:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"For '{op}', the 'reduction' must be in ['mean', 'sum', 'none'], "
                         f"but got {reduction!r}.")
    return reduction


def _reduce(loss: paddle.Tensor, reduction: str) -> paddle.Tensor:
    if reduction == "mean":
        return paddle.mean(loss)
    return paddle.sum(loss) if reduction == "sum" else loss


class LossBase(Cell):
    """``nn.LossBase(reduction='mean', dtype=mstype.float32)``: the base of user losses;
    ``get_loss(x, weights=1.0)`` multiplies in float32, reduces, and casts back to ``x``'s dtype."""

    def __init__(self, reduction: str = "mean", dtype: object = None):
        super().__init__()
        self.reduction = _reduction(type(self).__name__, reduction)

    def get_axis(self, x: paddle.Tensor) -> tuple[int, ...]:
        return tuple(range(x.ndim))

    def get_loss(self, x: paddle.Tensor, weights: object = 1.0) -> paddle.Tensor:
        dtype = x.dtype
        x = x.astype("float32")
        weights = weights.astype("float32") if isinstance(weights, paddle.Tensor) else float(weights)
        return _reduce(x * weights, self.reduction).astype(dtype)

    def construct(self, logits: paddle.Tensor, labels: paddle.Tensor) -> paddle.Tensor:
        raise NotImplementedError(f"{type(self).__name__} must define construct(logits, labels)")


class _ElementwiseLoss(Cell):
    """A loss of ``logits - labels`` element by element, then reduced."""

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = _reduction(type(self).__name__, reduction)

    def construct(self, logits: paddle.Tensor, labels: paddle.Tensor) -> paddle.Tensor:
        return _reduce(type(self).elementwise(logits - labels), self.reduction)


class MSELoss(_ElementwiseLoss):
    """``nn.MSELoss(reduction='mean')``: ``(logits - labels) ** 2``."""

    elementwise = staticmethod(paddle.square)


class L1Loss(_ElementwiseLoss):
    """``nn.L1Loss(reduction='mean')``: ``|logits - labels|``."""

    elementwise = staticmethod(paddle.abs)


class CrossEntropyLoss(Cell):
    """``nn.CrossEntropyLoss(weight=None, ignore_index=-100, reduction='mean', label_smoothing=0.0)``.

    Logits ``(N, C)`` (or ``(N, C, d...)``) against class indices or class probabilities; the
    weighted mean divides by the weights of the counted targets, as MindSpore's (and PyTorch's).
    """

    def __init__(self, weight: paddle.Tensor | None = None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0):
        super().__init__()
        if not 0.0 <= label_smoothing <= 1.0:
            raise ValueError(f"For 'CrossEntropyLoss', 'label_smoothing' must be in [0, 1], "
                             f"but got {label_smoothing}.")
        self.weight, self.ignore_index = weight, ignore_index
        self.reduction = _reduction("CrossEntropyLoss", reduction)
        self.label_smoothing = label_smoothing

    def construct(self, logits: paddle.Tensor, labels: paddle.Tensor) -> paddle.Tensor:
        if labels.is_floating_point():
            return self._probabilities(logits, labels)
        labels = labels.astype(paddle.int64)
        if self.label_smoothing:
            return self._smoothed(logits, labels)
        loss = F.cross_entropy(logits, paddle.unsqueeze(labels, 1), weight=self.weight,
                               ignore_index=self.ignore_index, reduction=self.reduction, axis=1)
        return paddle.squeeze(loss, 1) if self.reduction == "none" and loss.ndim == logits.ndim else loss

    def _probabilities(self, logits: paddle.Tensor, labels: paddle.Tensor) -> paddle.Tensor:
        classes = logits.shape[1]
        if self.label_smoothing:
            labels = labels * (1 - self.label_smoothing) + self.label_smoothing / classes
        log_p = F.log_softmax(logits, axis=1)
        if self.weight is not None:
            log_p = log_p * paddle.reshape(self.weight, [1, classes] + [1] * (logits.ndim - 2))
        loss = -paddle.sum(log_p * labels, axis=1)
        return _reduce(loss, self.reduction)

    def _smoothed(self, logits: paddle.Tensor, labels: paddle.Tensor) -> paddle.Tensor:
        """Class indices with label smoothing (MindSpore's and PyTorch's formula)."""
        classes = logits.shape[1]
        log_p = F.log_softmax(logits, axis=1)
        kept = labels != self.ignore_index
        safe = paddle.where(kept, labels, paddle.zeros_like(labels))
        weight = paddle.ones([classes], logits.dtype) if self.weight is None else self.weight
        shape = [1, classes] + [1] * (logits.ndim - 2)
        picked = paddle.squeeze(paddle.take_along_axis(log_p, paddle.unsqueeze(safe, 1), axis=1), 1)
        target_w = paddle.gather(weight, paddle.flatten(safe)).reshape(safe.shape)
        nll = -picked * target_w
        smooth = -paddle.sum(log_p * paddle.reshape(weight, shape), axis=1) / classes
        zero = paddle.zeros_like(nll)
        loss = paddle.where(kept, (1 - self.label_smoothing) * nll + self.label_smoothing * smooth, zero)
        if self.reduction == "mean":
            return paddle.sum(loss) / paddle.sum(paddle.where(kept, target_w, zero))
        return _reduce(loss, self.reduction)


class SoftmaxCrossEntropyWithLogits(Cell):
    """``nn.SoftmaxCrossEntropyWithLogits(sparse=False, reduction='none')``."""

    def __init__(self, sparse: bool = False, reduction: str = "none"):
        super().__init__()
        self.sparse = sparse
        self.reduction = _reduction("SoftmaxCrossEntropyWithLogits", reduction)

    def construct(self, logits: paddle.Tensor, labels: paddle.Tensor) -> paddle.Tensor:
        if self.sparse:
            labels = paddle.unsqueeze(labels.astype("int64"), -1)
        loss = F.cross_entropy(logits, labels, soft_label=not self.sparse, reduction=self.reduction)
        return paddle.squeeze(loss, -1) if self.reduction == "none" and loss.ndim > 1 else loss


class KLDivLoss(Cell):
    """``nn.KLDivLoss(reduction='mean')(logits, labels)``: ``ops.kl_div`` (``logits`` are
    log-probabilities; ``none``, ``mean``, ``batchmean`` or ``sum``)."""

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = check_kl_reduction(reduction)

    def construct(self, logits: paddle.Tensor, labels: paddle.Tensor) -> paddle.Tensor:
        return kl_div(logits, labels, self.reduction)
