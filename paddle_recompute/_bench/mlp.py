"""A residual MLP: input layer, ``blocks`` x ``x + Linear(GELU(Linear(LayerNorm(x))))``, classifier."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

from .blocks import Runner, plain_runner

__all__ = ["MLPConfig", "MLP", "mlp_batch", "mlp_loss"]


@dataclass
class MLPConfig:
    """Model and batch sizes."""

    hidden: int = 256
    blocks: int = 8
    batch: int = 256
    classes: int = 10
    dropout: float = 0.1


class MLPBlock(nn.Layer):
    """Pre-LN residual feed-forward block with a 4x expansion."""

    def __init__(self, cfg: MLPConfig):
        super().__init__()
        self.norm = nn.LayerNorm(cfg.hidden)
        self.up = nn.Linear(cfg.hidden, 4 * cfg.hidden)
        self.down = nn.Linear(4 * cfg.hidden, cfg.hidden)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return x + self.drop(self.down(F.gelu(self.up(self.norm(x)))))


class MLP(nn.Layer):
    """An input layer, ``cfg.blocks`` residual blocks and a linear classifier.

    The input layer makes every block's input require grad, as in a real network (Paddle's
    built-in reentrant recompute silently drops the gradients of a block whose inputs do not).
    """

    def __init__(self, cfg: MLPConfig, runner: Runner = plain_runner):
        super().__init__()
        self.runner = runner
        self.stem = nn.Linear(cfg.hidden, cfg.hidden)
        self.blocks = nn.LayerList([MLPBlock(cfg) for _ in range(cfg.blocks)])
        self.head = nn.Linear(cfg.hidden, cfg.classes)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        x = self.stem(x)
        for block in self.blocks:
            x = self.runner(block, x)
        return self.head(x)


def mlp_batch(cfg: MLPConfig, step: int) -> tuple[paddle.Tensor, paddle.Tensor]:
    """Gaussian features and random labels for ``step``."""
    rng = np.random.default_rng(step)
    x = rng.standard_normal((cfg.batch, cfg.hidden)).astype("float32")
    return paddle.to_tensor(x), paddle.to_tensor(rng.integers(0, cfg.classes, (cfg.batch,)))


def mlp_loss(logits: paddle.Tensor, labels: paddle.Tensor) -> paddle.Tensor:
    """Classification cross entropy."""
    return F.cross_entropy(logits, labels)
