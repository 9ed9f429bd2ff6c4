"""Functional neural-network operators: one-hot, padding, resizing, losses, normalisation.

MindSpore 2.10 signatures; where MindSpore's meaning differs from Paddle's function of the
same name the docstring says how it is mapped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import paddle
import paddle.nn.functional as F

from .._validate import not_provided

__all__ = [
    "one_hot",
    "pad",
    "interpolate",
    "cross_entropy",
    "binary_cross_entropy_with_logits",
    "l2_normalize",
    "resize_bilinear_legacy",
    "resize_nearest",
]


def one_hot(
    indices: paddle.Tensor, depth: int, on_value: Any = 1, off_value: Any = 0, axis: int = -1
) -> paddle.Tensor:
    """``ops.one_hot(indices, depth, on_value, off_value, axis=-1)``: the values' dtype."""
    hot = F.one_hot(indices.astype("int64"), depth)
    on = on_value if isinstance(on_value, paddle.Tensor) else paddle.to_tensor(on_value, dtype="float32")
    off = off_value if isinstance(off_value, paddle.Tensor) else paddle.to_tensor(off_value, dtype="float32")
    out = hot.astype(on.dtype) * (on - off) + off
    if axis != -1 and axis != indices.ndim:
        out = paddle.moveaxis(out, -1, axis)
    return out


def pad(
    input_x: paddle.Tensor, padding: Sequence[int], mode: str = "constant", value: float | None = None
) -> paddle.Tensor:
    """``ops.pad(input_x, padding, mode='constant', value=None)``: ``padding`` pairs from the last
    dimension backwards (``(left, right, top, bottom, ...)``); negative amounts crop."""
    if not isinstance(padding, paddle.Tensor) and not all(isinstance(p, int) for p in padding):
        raise TypeError(f"For 'pad', the paddings value must be tuple of int or list of int, "
                        f"but got {padding}")
    padding = [int(p) for p in padding]
    if len(padding) % 2 or len(padding) > 2 * input_x.ndim:
        raise ValueError(
            f"For 'pad', the length of 'padding' must be even and at most twice the input's "
            f"rank, but got {len(padding)}."
        )
    if mode == "constant":
        full = [0] * (2 * input_x.ndim)
        for i in range(len(padding) // 2):
            dim = input_x.ndim - 1 - i
            full[2 * dim], full[2 * dim + 1] = max(padding[2 * i], 0), max(padding[2 * i + 1], 0)
        out = F.pad(input_x, full, mode="constant", value=0.0 if value is None else value)
        return _crop(out, padding)
    if mode not in ("reflect", "replicate", "circular"):
        raise not_provided(f"ops.pad(mode={mode!r})")
    while len(padding) > 2 * (input_x.ndim - 2) and padding[-2:] == [0, 0]:
        padding = padding[:-2]  # pairs for the batch and channel axes, all zero
    layouts = {2: ("NCL", 3), 4: ("NCHW", 4), 6: ("NCDHW", 5)}
    if len(padding) not in layouts or input_x.ndim != layouts[len(padding)][1]:
        raise not_provided(f"ops.pad(mode={mode!r}) on a rank-{input_x.ndim} input with {len(padding)} pads")
    return F.pad(input_x, padding, mode=mode, data_format=layouts[len(padding)][0])


def _crop(out: paddle.Tensor, padding: list[int]) -> paddle.Tensor:
    if min(padding, default=0) >= 0:
        return out
    for i in range(len(padding) // 2):
        dim = out.ndim - 1 - i
        start, stop = -min(padding[2 * i], 0), out.shape[dim] + min(padding[2 * i + 1], 0)
        out = paddle.slice(out, [dim], [start], [stop])
    return out


def interpolate(
    input: paddle.Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",  # noqa: A002
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
) -> paddle.Tensor:
    """``ops.interpolate``: ``'nearest'``, ``'linear'``, ``'bilinear'``, ``'bicubic'``, ``'trilinear'``,
    ``'area'``; with ``align_corners=False`` the linear modes sample at half-pixel centres."""
    if recompute_scale_factor:
        raise not_provided("ops.interpolate(recompute_scale_factor=True)")
    modes = {
        "nearest": "nearest",
        "linear": "linear",
        "bilinear": "bilinear",
        "bicubic": "bicubic",
        "trilinear": "trilinear",
        "area": "area",
    }
    if mode not in modes:
        raise not_provided(f"ops.interpolate(mode={mode!r})")
    layout = {3: "NCW", 4: "NCHW", 5: "NCDHW"}[input.ndim]
    if isinstance(size, paddle.Tensor):
        size = size.tolist()
    if mode in ("nearest", "area"):
        return F.interpolate(
            input, size=size, scale_factor=scale_factor, mode=modes[mode], data_format=layout
        )
    return F.interpolate(
        input,
        size=size,
        scale_factor=scale_factor,
        mode=modes[mode],
        align_corners=bool(align_corners),
        align_mode=0,
        data_format=layout,
    )


def resize_bilinear_legacy(
    x: paddle.Tensor, size: Sequence[int], align_corners: bool, half_pixel_centers: bool
) -> paddle.Tensor:
    """``ResizeBilinearV2``: without ``half_pixel_centers`` the source of output pixel ``i`` is
    ``i * in / out`` (Paddle's ``align_mode=1``)."""
    if align_corners and half_pixel_centers:
        raise ValueError(
            "For 'ResizeBilinearV2', the 'half_pixel_centers' must be False when 'align_corners' is True."
        )
    return F.interpolate(
        x,
        size=list(size),
        mode="bilinear",
        align_corners=align_corners,
        align_mode=0 if half_pixel_centers else 1,
    )


def resize_nearest(x: paddle.Tensor, size: Sequence[int], align_corners: bool) -> paddle.Tensor:
    """``ResizeNearestNeighbor``: source ``floor(i * in / out)`` (``align_corners``: rounded on the
    corner-aligned grid)."""
    return F.interpolate(x, size=list(size), mode="nearest", align_corners=align_corners)


def cross_entropy(
    input: paddle.Tensor,
    target: paddle.Tensor,
    weight: paddle.Tensor | None = None,  # noqa: A002
    ignore_index: int = -100,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> paddle.Tensor:
    """``ops.cross_entropy``: class indices (an int target) or class probabilities (a float
    target) along axis 1. With label smoothing the class-index loss is MindSpore's
    ``(1 - eps) * nll + eps / C * smooth``, ``smooth = -sum_c w_c log p_c``; ``'mean'`` divides
    both by the summed weights of the targets."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(
            f"For 'cross_entropy', the 'reduction' must be in ['mean', 'sum', 'none'], but got {reduction}."
        )
    logp = F.log_softmax(input, axis=1)
    classes = input.shape[1]
    w = paddle.ones([classes], dtype=logp.dtype) if weight is None else weight.astype(logp.dtype)
    shape = [1, classes] + [1] * (input.ndim - 2)
    if target.dtype in (paddle.float16, paddle.float32, paddle.float64, paddle.bfloat16):
        if label_smoothing:
            target = target * (1 - label_smoothing) + label_smoothing / classes
        loss = -(logp * target.astype(logp.dtype) * paddle.reshape(w, shape)).sum(axis=1)
        if reduction == "mean":
            return loss.sum() / (loss.size if input.ndim == 2 else loss.size)
        return loss.sum() if reduction == "sum" else loss
    target = target.astype("int64")
    keep = target != ignore_index
    safe = paddle.where(keep, target, paddle.zeros_like(target))
    picked = paddle.take_along_axis(logp, safe.unsqueeze(1), axis=1).squeeze(1)
    tw = paddle.gather(w, safe.flatten()).reshape(safe.shape) * keep.astype(logp.dtype)
    nll = -picked * tw
    smooth = -(logp * paddle.reshape(w, shape)).sum(axis=1) * keep.astype(logp.dtype)
    if reduction == "mean":
        nll, smooth = nll.sum() / tw.sum(), smooth.sum() / tw.sum()
    elif reduction == "sum":
        nll, smooth = nll.sum(), smooth.sum()
    if not label_smoothing:
        return nll
    return (1.0 - label_smoothing) * nll + (label_smoothing / classes) * smooth


def binary_cross_entropy_with_logits(
    input: paddle.Tensor,
    target: paddle.Tensor,  # noqa: A002
    weight: paddle.Tensor | None = None,
    pos_weight: paddle.Tensor | None = None,
    reduction: str = "mean",
) -> paddle.Tensor:
    """``ops.binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,
    reduction='mean')``."""
    return F.binary_cross_entropy_with_logits(
        input, target, weight=weight, reduction=reduction, pos_weight=pos_weight
    )


def l2_normalize(x: paddle.Tensor, axis: Any = 0, epsilon: float = 1e-4) -> paddle.Tensor:
    """``L2Normalize``: ``x / sqrt(max(sum(x^2, axis), epsilon))``."""
    axes = list(axis) if isinstance(axis, list | tuple) else [axis]
    square_sum = paddle.sum(paddle.square(x), axis=axes, keepdim=True)
    return x / paddle.sqrt(paddle.maximum(square_sum, paddle.full([], epsilon, dtype=x.dtype)))
