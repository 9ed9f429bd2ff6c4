"""``nn.Unfold``: image patches, MindSpore's layout (``ExtractImagePatches``)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import paddle
import paddle.nn.functional as F

from .._cell import Cell

__all__ = ["Unfold"]


def _pair(name: str, value: Sequence[int]) -> tuple[int, int]:
    if len(value) != 4 or value[0] != 1 or value[3] != 1:
        raise ValueError(f"For 'Unfold', '{name}' must be [1, row, col, 1], but got {value!r}.")
    return value[1], value[2]


class Unfold(Cell):
    """``nn.Unfold(ksizes, strides, rates, padding='valid')`` on ``(N, C, H, W)``: ``(N, kh * kw * C,
    out_h, out_w)``, the depth ordered row, column, channel (channel fastest), as MindSpore's
    ``ExtractImagePatches``; ``padding='same'`` pads like TensorFlow (the odd one at the end)."""

    def __init__(
        self, ksizes: Sequence[int], strides: Sequence[int], rates: Sequence[int], padding: str = "valid"
    ):
        super().__init__()
        self.ksizes, self.strides = _pair("ksizes", ksizes), _pair("strides", strides)
        self.rates = _pair("rates", rates)
        if padding.lower() not in ("valid", "same"):
            raise ValueError(f"For 'Unfold', the 'padding' must be 'valid' or 'same', but got {padding!r}.")
        self.padding = padding.lower()

    def _pads(self, size: int, axis: int) -> tuple[int, int]:
        k, s, r = self.ksizes[axis], self.strides[axis], self.rates[axis]
        out = math.ceil(size / s)
        total = max((out - 1) * s + (k - 1) * r + 1 - size, 0)
        return total // 2, total - total // 2

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        n, c, h, w = x.shape
        if self.padding == "same":
            (top, bottom), (left, right) = self._pads(h, 0), self._pads(w, 1)
            x = F.pad(x, [top, bottom, left, right], data_format="NCHW")
            h, w = h + top + bottom, w + left + right
        kh, kw = self.ksizes
        patches = F.unfold(x, [kh, kw], strides=list(self.strides), paddings=0, dilations=list(self.rates))
        out_h = (h - (kh - 1) * self.rates[0] - 1) // self.strides[0] + 1
        out_w = (w - (kw - 1) * self.rates[1] - 1) // self.strides[1] + 1
        patches = paddle.reshape(patches, [n, c, kh * kw, out_h * out_w])
        patches = paddle.transpose(patches, [0, 2, 1, 3])
        return paddle.reshape(patches, [n, kh * kw * c, out_h, out_w])
