"""``functional.mixed_precision_cast`` and the ``ops.AllReduce`` collective."""

from __future__ import annotations

from typing import Any

import paddle

from .._dtype import to_paddle_dtype
from .._primitive import Primitive
from .._validate import not_provided
from ._communication import ReduceOp

__all__ = ["mixed_precision_cast", "AllReduce"]


def mixed_precision_cast(dst_type: Any, x: Any) -> Any:
    """``F.mixed_precision_cast(dst_type, x)``: floating-point tensors (inside tuples and lists
    too) cast to ``dst_type``; other values unchanged."""
    if isinstance(x, paddle.Tensor):
        return x.astype(to_paddle_dtype(dst_type)) if x.is_floating_point() else x
    if isinstance(x, tuple | list):
        return type(x)(mixed_precision_cast(dst_type, v) for v in x)
    return x


_PADDLE_OPS = {ReduceOp.SUM: "SUM", ReduceOp.MAX: "MAX", ReduceOp.MIN: "MIN", ReduceOp.PROD: "PROD",
               ReduceOp.AVG: "AVG"}


class AllReduce(Primitive):
    """``ops.AllReduce(op=ReduceOp.SUM, group=...)(x)``: the reduction over every process of
    ``paddle.distributed`` (the input itself in a single process); only the world group."""

    def setup(self, op: str = ReduceOp.SUM, group: str = "hccl_world_group") -> None:
        if op not in _PADDLE_OPS:
            raise ValueError(f"For 'AllReduce', the 'op' must be one of {sorted(_PADDLE_OPS)}, but got "
                             f"{op!r}.")
        if group not in ("hccl_world_group", "nccl_world_group"):
            raise not_provided(f"ops.AllReduce(group={group!r})", "only the world group is provided")
        self.op = op

    def compute(self, x: paddle.Tensor) -> paddle.Tensor:
        if paddle.distributed.get_world_size() <= 1:
            return x
        out = x.clone()
        reduce_op = getattr(paddle.distributed.ReduceOp, _PADDLE_OPS[self.op])
        paddle.distributed.all_reduce(out, op=reduce_op)
        return out
