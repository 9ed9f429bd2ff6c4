"""Transposed convolution cells: ``nn.Conv1dTranspose``, ``nn.Conv2dTranspose``, ``nn.Conv3dTranspose``.

Weight layout ``(in_channels, out_channels / group, *kernel)`` (MindSpore's and Paddle's);
``Conv1dTranspose`` is, as in MindSpore, the 2-D one over ``(N, C, 1, L)``, its weight
``(in_channels, out_channels / group, 1, k)`` (a ``weight_init`` Tensor is 3-D and gains the axis). Output
size per spatial axis, as MindSpore documents it: ``'same'`` gives ``in * stride``; ``'valid'``
``(in - 1) * stride + dilation * (k - 1) + 1``; ``'pad'`` that minus the two paddings.
"""

from __future__ import annotations

from typing import Any

import paddle
import paddle.nn.functional as F

from .._cell import Cell
from .._dtype import float32
from .._validate import not_provided
from ..ops._operands import int_tuple
from ._params import default_bias_init, default_weight_init, make_parameter

__all__ = ["Conv1dTranspose", "Conv2dTranspose", "Conv3dTranspose"]


class _ConvTranspose(Cell):
    rank = 2
    op = "Conv2dTranspose"
    function: Any = None

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        pad_mode: str = "same",
        padding: Any = 0,
        output_padding: Any = 0,
        dilation: Any = 1,
        group: int = 1,
        has_bias: bool = False,
        weight_init: Any = None,
        bias_init: Any = None,
        dtype: Any = float32,
    ):
        super().__init__()
        n = self.rank
        if in_channels % group or out_channels % group:
            raise ValueError(
                f"For '{self.op}', 'in_channels' ({in_channels}) and 'out_channels' "
                f"({out_channels}) must be divisible by 'group' ({group})."
            )
        self.kernel_size = int_tuple(self.op, "kernel_size", kernel_size, n)
        self.stride = int_tuple(self.op, "stride", stride, n)
        self.dilation = int_tuple(self.op, "dilation", dilation, n)
        if any(int_tuple(self.op, "output_padding", output_padding, n)):
            raise not_provided(f"nn.{self.op}(output_padding != 0)")
        mode = pad_mode.lower()
        if mode not in ("same", "valid", "pad"):
            raise ValueError(
                f"For '{self.op}', the 'pad_mode' must be one of ['same', 'valid', 'pad'], "
                f"but got {pad_mode!r}."
            )
        pads = int_tuple(self.op, "padding", padding, 2 * n)
        if mode != "pad" and any(pads):
            raise ValueError(
                f"For '{self.op}', the 'padding' must be zero when 'pad_mode' is not 'pad', "
                f"but got {padding!r}."
            )
        self.padding = {"same": "SAME", "valid": 0}.get(mode, list(pads))
        self.group = group
        self.in_channels, self.out_channels, self.has_bias = in_channels, out_channels, has_bias
        w_init = default_weight_init() if weight_init is None else self.weight_init_value(weight_init)
        self.weight = make_parameter(
            w_init,
            [in_channels, out_channels // group, *self.weight_kernel()],
            dtype,
            f"{self.op.lower()}.weight",
        )
        self.bias = None
        if has_bias:
            fan_in = in_channels
            for k in self.kernel_size:
                fan_in *= k
            b_init = default_bias_init(fan_in) if bias_init is None else bias_init
            self.bias = make_parameter(b_init, [out_channels], dtype, f"{self.op.lower()}.bias")

    def weight_kernel(self) -> tuple[int, ...]:
        return self.kernel_size

    def weight_init_value(self, weight_init: Any) -> Any:
        return weight_init

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        if x.ndim != self.rank + 2:
            raise ValueError(f"For '{self.op}', the input must have rank {self.rank + 2}, but got {x.ndim}.")
        return type(self).function(
            x,
            self.weight,
            self.bias,
            stride=self.stride,
            padding=self.padding,
            dilation=self.dilation,
            groups=self.group,
        )


class Conv1dTranspose(_ConvTranspose):
    """``nn.Conv1dTranspose(in_channels, out_channels, kernel_size, stride=1, pad_mode='same', padding=0,
    dilation=1, group=1, has_bias=False, ...)`` on ``(N, C, L)``."""

    rank, op = 1, "Conv1dTranspose"

    def weight_kernel(self) -> tuple[int, ...]:
        return (1, *self.kernel_size)

    def weight_init_value(self, weight_init: Any) -> Any:
        if isinstance(weight_init, paddle.Tensor):
            if weight_init.ndim != 3:
                raise ValueError(
                    f"For 'Conv1dTranspose', the 'weight_init_shape' must be int and must = 3, "
                    f"but got '{weight_init.ndim}' with type 'int'."
                )
            return paddle.unsqueeze(weight_init, 2)
        return weight_init

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        if x.ndim != 3:
            raise ValueError(f"For 'Conv1dTranspose', the input must have rank 3, but got {x.ndim}.")
        padding = self.padding if isinstance(self.padding, str | int) else [0, 0, *self.padding]
        output = F.conv2d_transpose(
            paddle.unsqueeze(x, 2),
            self.weight,
            self.bias,
            stride=(1, *self.stride),
            padding=padding,
            dilation=(1, *self.dilation),
            groups=self.group,
        )
        return paddle.squeeze(output, 2)


class Conv2dTranspose(_ConvTranspose):
    """``nn.Conv2dTranspose(...)`` on ``(N, C, H, W)``; ``padding`` an int or
    ``(top, bottom, left, right)``."""

    rank, op = 2, "Conv2dTranspose"
    function = staticmethod(F.conv2d_transpose)


class Conv3dTranspose(_ConvTranspose):
    """``nn.Conv3dTranspose(...)`` on ``(N, C, D, H, W)``."""

    rank, op = 3, "Conv3dTranspose"
    function = staticmethod(F.conv3d_transpose)
