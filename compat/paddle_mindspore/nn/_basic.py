"""Dense, activation, dropout, flatten, identity and one-hot cells."""

from __future__ import annotations

from typing import Any

import paddle
import paddle.nn.functional as F

from .._cell import Cell
from .._dtype import float32, to_paddle_dtype
from .._primitive import Primitive
from .._validate import not_provided
from ..ops._functional_nn import one_hot
from ..ops._nn import Dropout as _DropoutPrimitive
from ..ops._nn import relu
from ._params import default_bias_init, default_weight_init, make_parameter

__all__ = ["Dense", "ReLU", "Dropout", "Flatten", "Identity", "OneHot"]


def _positive_int(op: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"For '{op}', the '{name}' must be a positive int, but got {value!r}.")
    return value


def _activation(activation: Any) -> Any:
    if activation is None or isinstance(activation, Cell | Primitive):
        return activation
    if activation == "relu":
        return ReLU()
    raise not_provided(f"nn.Dense(activation={activation!r})", "pass a Cell or a Primitive")


class Dense(Cell):
    """``nn.Dense(in_channels, out_channels, weight_init=None, bias_init=None, has_bias=True,
    activation=None)``.

    ``weight`` has MindSpore's layout ``(out_channels, in_channels)``; ``y = x W^T + b``.
    """

    def __init__(self, in_channels: int, out_channels: int, weight_init: Any = None, bias_init: Any = None,
                 has_bias: bool = True, activation: Any = None, dtype: Any = float32):
        super().__init__()
        self.in_channels = _positive_int("Dense", "in_channels", in_channels)
        self.out_channels = _positive_int("Dense", "out_channels", out_channels)
        self.has_bias = has_bias
        w_init = default_weight_init() if weight_init is None else weight_init
        self.weight = make_parameter(w_init, [out_channels, in_channels], dtype, "dense.weight")
        self.bias = None
        if has_bias:
            b_init = default_bias_init(in_channels) if bias_init is None else bias_init
            self.bias = make_parameter(b_init, [out_channels], dtype, "dense.bias")
        self.activation = _activation(activation)

    def extend_repr(self) -> str:
        text = (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"has_bias={self.has_bias}")
        return text if self.activation is None else f"{text}, activation={self.activation}"

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        shape = x.shape
        if len(shape) != 2:
            x = paddle.reshape(x, [-1, shape[-1]])
        x = paddle.matmul(x, self.weight, transpose_y=True)
        if self.bias is not None:
            x = paddle.add(x, self.bias)
        if self.activation is not None:
            x = self.activation(x)
        if len(shape) != 2:
            x = paddle.reshape(x, list(shape[:-1]) + [self.out_channels])
        return x


class ReLU(Cell):
    """``nn.ReLU()`` (MindSpore's gradient at clipped elements, see ``ops.relu``)."""

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        return relu(x)


class Dropout(Cell):
    """``nn.Dropout(keep_prob=0.5, p=None)``: identity unless in training mode (``set_train()``)."""

    def __init__(self, keep_prob: float = 0.5, p: float | None = None, dtype: Any = float32):
        super().__init__()
        if p is None:
            if not 0 < keep_prob <= 1:
                raise ValueError(f"For 'Dropout', the 'keep_prob' must be a number in range (0, 1], "
                                 f"but got {keep_prob}.")
            p = 1.0 - keep_prob
        elif not 0 <= p < 1:
            raise ValueError(f"For 'Dropout', the 'p' must be a number in range [0, 1), but got {p}.")
        self.p = p
        # MindSpore's cell holds its ``ops.Dropout`` primitive as ``dropout``; models reach it
        # to record a sharding strategy (mindformers: ``cell.dropout.dropout.shard(...)``).
        # construct below draws its mask with Paddle's dropout, not through this primitive, so
        # a ``recompute()`` mark on it is kept as its attribute and does nothing: what
        # MindSpore 2.10 does in PyNative (compat/tests/test_ms_dropout_mark.py).
        self.dropout = _DropoutPrimitive(1.0 - p)

    def extend_repr(self) -> str:
        return f"p={self.p}"

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        if not self.training or self.p == 0:
            return x
        return F.dropout(x, p=self.p, training=True, mode="upscale_in_train")


class Flatten(Cell):
    """``nn.Flatten(start_dim=1, end_dim=-1)``."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        return paddle.flatten(x, start_axis=self.start_dim, stop_axis=self.end_dim)


class Identity(Cell):
    """``nn.Identity()``: returns its input."""

    def construct(self, x: Any) -> Any:
        return x


class OneHot(Cell):
    """``nn.OneHot(axis=-1, depth=1, on_value=1.0, off_value=0.0, dtype=mstype.float32)``."""

    def __init__(self, axis: int = -1, depth: int = 1, on_value: float = 1.0, off_value: float = 0.0,
                 dtype: Any = float32):
        super().__init__()
        self.axis, self.depth = axis, _positive_int("OneHot", "depth", depth)
        self.on_value, self.off_value, self.dtype = on_value, off_value, dtype

    def construct(self, indices: paddle.Tensor) -> paddle.Tensor:
        return one_hot(indices, self.depth, self.on_value, self.off_value, self.axis).astype(
            to_paddle_dtype(self.dtype))
