"""Neural-network primitives: activations, softmax, dropout, convolution."""

from __future__ import annotations

from typing import Any

import paddle
import paddle.nn.functional as F

from .._primitive import Primitive
from .._seed import SeededStream
from .._validate import not_provided
from ._dropout import dropout_with_mask
from ._operands import int_tuple

__all__ = ["ReLU", "Sigmoid", "Tanh", "Softmax", "Dropout", "Conv2D", "Conv2DTranspose", "conv_padding",
           "relu"]


def relu(x: paddle.Tensor) -> paddle.Tensor:
    """ReLU with MindSpore's gradient: ``dx = dy where x > 0 else 0`` (a select).

    Paddle's ``relu`` multiplies (``dy * (y > 0)``), which turns an infinite ``dy`` at a
    clipped element into NaN; MindSpore's ReluGrad gives 0 there (e.g. ``sqrt(relu(x))`` at
    ``x = -1``, the ``Primitive.recompute`` docstring example). Same forward values; saves
    the boolean condition instead of the output.
    """
    return paddle.where(x > 0, x, paddle.zeros([], dtype=x.dtype))


class ReLU(Primitive):
    """``ReLU()(x)``."""

    def compute(self, x: paddle.Tensor) -> paddle.Tensor:
        return relu(x)


class Sigmoid(Primitive):
    def compute(self, x: paddle.Tensor) -> paddle.Tensor:
        return F.sigmoid(x)


class Tanh(Primitive):
    def compute(self, x: paddle.Tensor) -> paddle.Tensor:
        return paddle.tanh(x)


class Softmax(Primitive):
    """``Softmax(axis=-1)(x)``."""

    def setup(self, axis: int | tuple[int] = -1) -> None:
        if isinstance(axis, tuple | list):
            if len(axis) != 1:
                raise not_provided("ops.Softmax over several axes")
            axis = axis[0]
        self.axis = axis
        self.add_prim_attr("axis", axis)

    def compute(self, x: paddle.Tensor) -> paddle.Tensor:
        return F.softmax(x, axis=self.axis)


class Dropout(Primitive):
    """``Dropout(keep_prob=0.5, Seed0=0, Seed1=0)(x) -> (output, mask)``.

    With both seeds 0 the mask comes from the global generator (``set_seed``); otherwise
    from a private stream seeded by ``(Seed0, Seed1)`` (equal seeds, equal masks). Either
    way recomputation replays it, so recomputed masks equal the forward masks.
    """

    random = True

    def setup(self, keep_prob: float = 0.5, Seed0: int = 0, Seed1: int = 0) -> None:  # noqa: N803
        self.keep_prob = keep_prob
        for name, value in (("keep_prob", keep_prob), ("Seed0", Seed0), ("Seed1", Seed1)):
            self.add_prim_attr(name, value)
        self.add_prim_attr("side_effect_hidden", True)
        self.stream = SeededStream(Seed0 * 1_000_003 + Seed1) if (Seed0 or Seed1) else None

    def compute(self, x: paddle.Tensor) -> tuple[paddle.Tensor, paddle.Tensor]:
        keep = self.keep_prob
        if not 0 < keep <= 1:
            raise ValueError(f"For 'Dropout', the 'keep_prob' must be in range (0, 1], but got {keep}.")
        if self.stream is None:
            return dropout_with_mask(x, keep)
        with self.stream.active():
            return dropout_with_mask(x, keep)


def conv_padding(op: str, pad_mode: str, pad: Any) -> Any:
    """MindSpore ``pad_mode``/``pad`` as Paddle's ``padding`` argument."""
    mode = pad_mode.lower()
    if mode == "same":
        padding = "SAME"
    elif mode == "valid":
        padding = "VALID"
    elif mode == "pad":
        pads = int_tuple(op, "pad", pad, 4)
        return list(pads)
    else:
        raise ValueError(f"For '{op}', the 'pad_mode' must be one of ['same', 'valid', 'pad'], "
                         f"but got {pad_mode!r}.")
    if any(int_tuple(op, "pad", pad, 4)):
        raise ValueError(f"For '{op}', the 'pad' must be zero when 'pad_mode' is not 'pad', but got {pad!r}.")
    return padding


class Conv2D(Primitive):
    """``Conv2D(out_channel, kernel_size, mode=1, pad_mode='valid', pad=0, stride=1, dilation=1,
    group=1)(x, weight)``."""

    def setup(self, out_channel: int, kernel_size: Any, mode: int = 1, pad_mode: str = "valid", pad: Any = 0,
              stride: Any = 1, dilation: Any = 1, group: int = 1, data_format: str = "NCHW") -> None:
        if data_format != "NCHW":
            raise not_provided(f"ops.Conv2D(data_format={data_format!r})")
        self.out_channel, self.group = out_channel, group
        self.kernel_size = int_tuple("Conv2D", "kernel_size", kernel_size, 2)
        self.padding = conv_padding("Conv2D", pad_mode, pad)
        self.stride = int_tuple("Conv2D", "stride", stride, 2)
        self.dilation = int_tuple("Conv2D", "dilation", dilation, 2)
        for name, value in (("out_channel", out_channel), ("kernel_size", self.kernel_size),
                            ("mode", mode), ("pad_mode", pad_mode), ("pad", pad), ("stride", self.stride),
                            ("dilation", self.dilation), ("group", group)):
            self.add_prim_attr(name, value)

    def compute(self, x: paddle.Tensor, weight: paddle.Tensor) -> paddle.Tensor:
        return F.conv2d(x, weight, stride=self.stride, padding=self.padding, dilation=self.dilation,
                        groups=self.group)


class Conv2DTranspose(Primitive):
    """``Conv2DTranspose(out_channel, kernel_size, pad_mode='valid', pad=0, pad_list=None, mode=1,
    stride=1, dilation=1, group=1)(dout, weight, input_size)``: the gradient of ``Conv2D`` with
    respect to its input, of shape ``input_size``; ``weight`` is that Conv2D's weight, of
    ``dout``'s dtype (MindSpore's error otherwise)."""

    def setup(self, out_channel: int, kernel_size: Any, pad_mode: str = "valid", pad: Any = 0,
              pad_list: Any = None, mode: int = 1, stride: Any = 1, dilation: Any = 1, group: int = 1,
              data_format: str = "NCHW") -> None:
        if data_format != "NCHW":
            raise not_provided(f"ops.Conv2DTranspose(data_format={data_format!r})")
        if pad_list is not None:
            pad, pad_mode = pad_list, "pad"
        self.group = group
        self.padding = conv_padding("Conv2DTranspose", pad_mode, pad)
        self.stride = int_tuple("Conv2DTranspose", "stride", stride, 2)
        self.dilation = int_tuple("Conv2DTranspose", "dilation", dilation, 2)

    def compute(self, dout: paddle.Tensor, weight: paddle.Tensor, input_size: Any) -> paddle.Tensor:
        if weight.dtype != dout.dtype:
            raise TypeError("For primitive[Conv2DTranspose], the input type must be same.")
        size = list(input_size)[2:]
        return F.conv2d_transpose(dout, weight, stride=self.stride, padding=self.padding,
                                  dilation=self.dilation, groups=self.group, output_size=size)
