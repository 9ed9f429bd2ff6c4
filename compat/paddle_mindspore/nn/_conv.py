"""Convolution and pooling cells (NCL / NCHW / NCDHW)."""

from __future__ import annotations

from typing import Any

import paddle
import paddle.nn.functional as F

from .._cell import Cell
from .._dtype import float32
from .._validate import not_provided
from ..ops._array import BiasAdd
from ..ops._nn import Conv2D, conv_padding
from ..ops._operands import int_tuple
from ._params import default_bias_init, default_weight_init, make_parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d"]


def _nchw_only(op: str, data_format: str) -> None:
    if data_format != "NCHW":
        raise not_provided(f"nn.{op}(data_format={data_format!r})")


class Conv2d(Cell):
    """``nn.Conv2d(in_channels, out_channels, kernel_size, stride=1, pad_mode='same', padding=0, ...)``.

    ``pad_mode='same'`` pads like MindSpore (the odd extra row/column at the bottom/right);
    ``weight_init`` takes an initialiser, a name such as ``'ones'`` or a number.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 pad_mode: str = "same", padding: Any = 0, dilation: Any = 1, group: int = 1,
                 has_bias: bool = False, weight_init: Any = None, bias_init: Any = None,
                 data_format: str = "NCHW", dtype: Any = float32):
        super().__init__()
        _nchw_only("Conv2d", data_format)
        if in_channels % group or out_channels % group:
            raise ValueError(f"For 'Conv2d', 'in_channels' ({in_channels}) and 'out_channels' "
                             f"({out_channels}) must be divisible by 'group' ({group}).")
        self.kernel_size = int_tuple("Conv2d", "kernel_size", kernel_size, 2)
        self.stride = int_tuple("Conv2d", "stride", stride, 2)
        self.dilation = int_tuple("Conv2d", "dilation", dilation, 2)
        self.padding = conv_padding("Conv2d", pad_mode, padding)
        self.pad_mode, self.group = pad_mode, group
        self.in_channels, self.out_channels, self.has_bias = in_channels, out_channels, has_bias
        shape = [out_channels, in_channels // group, *self.kernel_size]
        w_init = default_weight_init() if weight_init is None else weight_init
        self.weight = make_parameter(w_init, shape, dtype, "conv2d.weight")
        self.bias = None
        if has_bias:
            fan_in = (in_channels // group) * self.kernel_size[0] * self.kernel_size[1]
            b_init = default_bias_init(fan_in) if bias_init is None else bias_init
            self.bias = make_parameter(b_init, [out_channels], dtype, "conv2d.bias")
        # MindSpore's own primitives: subclasses call them on their own weights (mindcv's StdConv2d)
        self.conv2d = Conv2D(out_channels, self.kernel_size, pad_mode=pad_mode, pad=padding,
                             stride=self.stride, dilation=self.dilation, group=group)
        self.bias_add = BiasAdd()

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        output = self.conv2d(x, self.weight)
        if self.has_bias:
            output = self.bias_add(output, self.bias)
        return output


class Conv3d(Cell):
    """``nn.Conv3d(in_channels, out_channels, kernel_size, stride=1, pad_mode='same', padding=0,
    dilation=1, group=1, has_bias=False, weight_init=None, bias_init=None, data_format='NCDHW')``;
    ``padding`` an int or ``(head, tail, top, bottom, left, right)``; weight
    ``(out, in / group, kd, kh, kw)``.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 pad_mode: str = "same", padding: Any = 0, dilation: Any = 1, group: int = 1,
                 has_bias: bool = False, weight_init: Any = None, bias_init: Any = None,
                 data_format: str = "NCDHW", dtype: Any = float32):
        super().__init__()
        if data_format != "NCDHW":
            raise not_provided(f"nn.Conv3d(data_format={data_format!r})")
        if in_channels % group or out_channels % group:
            raise ValueError(f"For 'Conv3d', 'in_channels' ({in_channels}) and 'out_channels' "
                             f"({out_channels}) must be divisible by 'group' ({group}).")
        self.kernel_size = int_tuple("Conv3d", "kernel_size", kernel_size, 3)
        self.stride = int_tuple("Conv3d", "stride", stride, 3)
        self.dilation = int_tuple("Conv3d", "dilation", dilation, 3)
        mode = pad_mode.lower()
        if mode not in ("same", "valid", "pad"):
            raise ValueError(f"For 'Conv3d', the 'pad_mode' must be one of ['same', 'valid', 'pad'], "
                             f"but got {pad_mode!r}.")
        pads = int_tuple("Conv3d", "padding", padding, 6)
        if mode != "pad" and any(pads):
            raise ValueError(f"For 'Conv3d', the 'padding' must be zero when 'pad_mode' is not 'pad', "
                             f"but got {padding!r}.")
        self.padding = {"same": "SAME", "valid": "VALID"}.get(mode, list(pads))
        self.pad_mode, self.group = pad_mode, group
        self.in_channels, self.out_channels, self.has_bias = in_channels, out_channels, has_bias
        shape = [out_channels, in_channels // group, *self.kernel_size]
        w_init = default_weight_init() if weight_init is None else weight_init
        self.weight = make_parameter(w_init, shape, dtype, "conv3d.weight")
        self.bias = None
        if has_bias:
            fan_in = (in_channels // group) * self.kernel_size[0] * self.kernel_size[1] * self.kernel_size[2]
            b_init = default_bias_init(fan_in) if bias_init is None else bias_init
            self.bias = make_parameter(b_init, [out_channels], dtype, "conv3d.bias")

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        return F.conv3d(x, self.weight, self.bias, stride=self.stride, padding=self.padding,
                        dilation=self.dilation, groups=self.group)


class Conv1d(Cell):
    """``nn.Conv1d(in_channels, out_channels, kernel_size, stride=1, pad_mode='same', padding=0, dilation=1,
    group=1, has_bias=False, weight_init=None, bias_init=None)`` on ``(N, C, L)``.

    As in MindSpore, a 2-D convolution over ``(N, C, 1, L)``: the weight is ``(out, in / group, 1, k)``
    (a 3-D ``weight_init`` Tensor gains the axis), and ``self.conv2d`` / ``self.bias_add`` are the
    primitives. ``pad_mode='same'`` pads like MindSpore (the odd extra element at the end),
    ``'pad'`` pads ``padding`` on both sides.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1,
                 pad_mode: str = "same", padding: int = 0, dilation: int = 1, group: int = 1,
                 has_bias: bool = False, weight_init: Any = None, bias_init: Any = None,
                 dtype: Any = float32):
        super().__init__()
        if in_channels % group or out_channels % group:
            raise ValueError(f"For 'Conv1d', 'in_channels' ({in_channels}) and 'out_channels' "
                             f"({out_channels}) must be divisible by 'group' ({group}).")
        mode = pad_mode.lower()
        if mode not in ("same", "valid", "pad"):
            raise ValueError(f"For 'Conv1d', the 'pad_mode' must be one of ['same', 'valid', 'pad'], "
                             f"but got {pad_mode!r}.")
        if mode != "pad" and padding:
            raise ValueError(f"For 'Conv1d', the 'padding' must be zero when 'pad_mode' is not 'pad', "
                             f"but got {padding!r}.")
        self.kernel_size, self.stride, self.dilation = (1, kernel_size), (1, stride), (1, dilation)
        self.padding, self.pad_mode, self.group = (0, 0, padding, padding), pad_mode, group
        self.in_channels, self.out_channels, self.has_bias = in_channels, out_channels, has_bias
        w_init = default_weight_init() if weight_init is None else weight_init
        if isinstance(w_init, paddle.Tensor):
            if w_init.ndim != 3:
                raise ValueError(f"For 'Conv1d', the 'weight_init_shape' must be of rank 3, "
                                 f"but got {list(w_init.shape)}.")
            w_init = paddle.unsqueeze(w_init, 2)
        self.weight = make_parameter(w_init, [out_channels, in_channels // group, 1, kernel_size], dtype,
                                     "conv1d.weight")
        self.bias = None
        if has_bias:
            fan_in = (in_channels // group) * kernel_size
            b_init = default_bias_init(fan_in) if bias_init is None else bias_init
            self.bias = make_parameter(b_init, [out_channels], dtype, "conv1d.bias")
        self.conv2d = Conv2D(out_channels, self.kernel_size, pad_mode=pad_mode, pad=self.padding,
                             stride=self.stride, dilation=self.dilation, group=group)
        self.bias_add = BiasAdd()

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        output = self.conv2d(paddle.unsqueeze(x, 2), self.weight)
        if self.has_bias:
            output = self.bias_add(output, self.bias)
        return paddle.squeeze(output, 2)


class _Pool2d(Cell):
    def __init__(self, op: str, kernel_size: Any, stride: Any, pad_mode: str, padding: Any,
                 ceil_mode: bool, data_format: str):
        super().__init__()
        _nchw_only(op, data_format)
        self.kernel_size = int_tuple(op, "kernel_size", kernel_size, 2)
        self.stride = int_tuple(op, "stride", stride, 2)
        self.padding = conv_padding(op, pad_mode, padding)
        self.ceil_mode = ceil_mode


class MaxPool2d(_Pool2d):
    """``nn.MaxPool2d(kernel_size=1, stride=1, pad_mode='valid', padding=0, ...)``."""

    def __init__(self, kernel_size: Any = 1, stride: Any = 1, pad_mode: str = "valid", padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False, ceil_mode: bool = False,
                 data_format: str = "NCHW"):
        if dilation not in (1, (1, 1)) or return_indices:
            raise not_provided("nn.MaxPool2d(dilation != 1 or return_indices=True)")
        super().__init__("MaxPool2d", kernel_size, stride, pad_mode, padding, ceil_mode, data_format)

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding, ceil_mode=self.ceil_mode)


class AvgPool2d(_Pool2d):
    """``nn.AvgPool2d(kernel_size=1, stride=1, pad_mode='valid', padding=0, ...)``.

    MindSpore runs ``pad_mode='same'`` (with the other options at their defaults) through its
    ``AvgPool`` primitive, whose CPU kernel averages over the elements inside the input only:
    ``count_include_pad`` applies to ``pad_mode='pad'`` alone. ``ceil_mode=True`` (MindSpore
    rescales windows that overhang the padded input) is not provided.
    """

    def __init__(self, kernel_size: Any = 1, stride: Any = 1, pad_mode: str = "valid", padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: int | None = None,
                 data_format: str = "NCHW"):
        if ceil_mode:
            raise not_provided("nn.AvgPool2d(ceil_mode=True)")
        if divisor_override is not None and divisor_override <= 0:
            raise ValueError(f"For 'AvgPool2d', the 'divisor_override' must be > 0, "
                             f"but got {divisor_override}.")
        super().__init__("AvgPool2d", kernel_size, stride, pad_mode, padding, ceil_mode, data_format)
        self.exclusive = pad_mode.lower() == "same" or not count_include_pad
        self.divisor_override = divisor_override

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding, ceil_mode=self.ceil_mode,
                            exclusive=self.exclusive, divisor_override=self.divisor_override)


class AdaptiveAvgPool2d(Cell):
    """``nn.AdaptiveAvgPool2d(output_size)``: an int, or ``(h, w)`` (``None`` keeps that size)."""

    def __init__(self, output_size: Any):
        super().__init__()
        self.output_size = output_size

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        size = self.output_size
        if isinstance(size, tuple | list):
            size = [x.shape[-2 + i] if s is None else s for i, s in enumerate(size)]
        return F.adaptive_avg_pool2d(x, size)
