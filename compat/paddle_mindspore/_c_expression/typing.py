"""``mindspore._c_expression.typing``: the dtype classes ``Float`` and ``BFloat``.

MindSpore's dtypes are instances of these; here the dtypes are Paddle's, so the classes
answer ``isinstance`` by the dtype: ``Float`` for float16/32/64, ``BFloat`` for bfloat16.
"""

from __future__ import annotations

import paddle

__all__ = ["Float", "BFloat"]


class _DtypeFamily(type):
    members: tuple = ()

    def __instancecheck__(cls, instance) -> bool:
        return (
            any(instance is m or instance == m for m in cls.members)
            if isinstance(instance, paddle.dtype)
            else False
        )


class Float(metaclass=_DtypeFamily):
    members = (paddle.float16, paddle.float32, paddle.float64)


class BFloat(metaclass=_DtypeFamily):
    members = (paddle.bfloat16,)
