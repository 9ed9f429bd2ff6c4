"""``nn.Embedding``: a lookup table named ``embedding_table``."""

from __future__ import annotations

from typing import Any

import paddle
import paddle.nn.functional as F

from .._cell import Cell
from .._dtype import float32
from .._initializer import Normal
from ._params import make_parameter

__all__ = ["Embedding"]


class Embedding(Cell):
    """``nn.Embedding(vocab_size, embedding_size, use_one_hot=False, embedding_table='normal',
    dtype=float32, padding_idx=None)``.

    ``'normal'`` draws ``Normal(sigma=0.01)``, as MindSpore's. ``padding_idx``: that row starts at
    zero (it still receives gradients, as in MindSpore). ``use_one_hot=True`` computes the same
    values and gradients by a lookup.
    """

    def __init__(self, vocab_size: int, embedding_size: int, use_one_hot: bool = False,
                 embedding_table: Any = "normal", dtype: Any = float32, padding_idx: int | None = None):
        super().__init__()
        self.vocab_size, self.embedding_size, self.use_one_hot = vocab_size, embedding_size, use_one_hot
        init = Normal(0.01) if isinstance(embedding_table, str) and embedding_table.lower() == "normal" \
            else embedding_table
        self.embedding_table = make_parameter(init, [vocab_size, embedding_size], dtype, "embedding.table")
        self.padding_idx = padding_idx
        if padding_idx is not None:
            if not -vocab_size <= padding_idx < vocab_size:
                raise ValueError(f"For 'Embedding', 'padding_idx' must be in [{-vocab_size}, {vocab_size}), "
                                 f"but got {padding_idx}.")
            with paddle.no_grad():
                self.embedding_table[padding_idx] = 0.0

    def construct(self, ids: paddle.Tensor) -> paddle.Tensor:
        return F.embedding(ids, self.embedding_table)
