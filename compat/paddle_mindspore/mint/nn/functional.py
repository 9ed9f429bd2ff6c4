"""``mindspore.mint.nn.functional``: ``embedding``, the lookup mindformers' training-graph
``VocabParallelEmbedding`` makes."""

from __future__ import annotations

from typing import Any

import paddle
import paddle.nn.functional as F

from ..._validate import missing as _missing
from ..._validate import not_provided

__all__ = ["embedding"]


def embedding(input: paddle.Tensor, weight: paddle.Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False) -> Any:
    """The rows of ``weight`` that ``input`` indexes (shape ``input.shape + [dim]``); the
    gradient adds into those rows, none into ``padding_idx``'s.

    Raises:
        NotImplementedError: ``max_norm`` or ``scale_grad_by_freq`` given.
    """
    if max_norm is not None or scale_grad_by_freq:
        raise not_provided("mindspore.mint.nn.functional.embedding(max_norm=..., scale_grad_by_freq=True)")
    if padding_idx is not None:
        padding_idx = padding_idx % weight.shape[0]
    return F.embedding(input.astype("int64"), weight, padding_idx=padding_idx)


def __getattr__(name: str):
    raise _missing("mindspore.mint.nn.functional", name)
