"""``==`` and ``!=`` between integer tensors of different widths, for MindSpore code.

MindSpore promotes ``int64 == int32`` (the tutorials' ``pred.argmax(1) == label`` with an
int32 label); Paddle 3.3 refuses to promote between integer types. MindSpore code gets the
narrower operand widened first; other callers keep Paddle's operators unchanged.
"""

from __future__ import annotations

from typing import Any

import paddle

from ._paddle_members import paddle_member

__all__ = ["equal", "not_equal"]

_INTS = (paddle.int8, paddle.int16, paddle.int32, paddle.int64, paddle.uint8)


def _widened(x: paddle.Tensor, y: Any) -> tuple[paddle.Tensor, Any]:
    if isinstance(y, paddle.Tensor) and x.dtype != y.dtype and x.dtype in _INTS and y.dtype in _INTS:
        wide = paddle.int64
        return x.astype(wide), y.astype(wide)
    return x, y


def equal(x: paddle.Tensor, y: Any) -> Any:
    return paddle_member(paddle.Tensor, "__eq__")(*_widened(x, y))


def not_equal(x: paddle.Tensor, y: Any) -> Any:
    return paddle_member(paddle.Tensor, "__ne__")(*_widened(x, y))
