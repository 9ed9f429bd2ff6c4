"""A small ResNet (basic blocks with BatchNorm) for image classification.

BatchNorm updates its running statistics in every forward, so a recomputed block must
not update them twice: the benchmark's loss and parameter checks catch a recompute
that does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

from .blocks import Runner, plain_runner

__all__ = ["ResNetConfig", "ResNet", "resnet_batch", "resnet_loss"]


@dataclass
class ResNetConfig:
    """Model and batch sizes: ``blocks`` basic blocks per stage, three stages."""

    channels: int = 16
    blocks: int = 2
    image: int = 32
    batch: int = 16
    classes: int = 10


class BasicBlock(nn.Layer):
    """conv-BN-ReLU-conv-BN plus a (projected, when the shape changes) shortcut."""

    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2D(cin, cout, 3, stride=stride, padding=1, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(cout)
        self.conv2 = nn.Conv2D(cout, cout, 3, padding=1, bias_attr=False)
        self.bn2 = nn.BatchNorm2D(cout)
        self.shortcut = (nn.Sequential(nn.Conv2D(cin, cout, 1, stride=stride, bias_attr=False),
                                       nn.BatchNorm2D(cout))
                         if stride != 1 or cin != cout else nn.Identity())

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + self.shortcut(x))


class ResNet(nn.Layer):
    """Stem, three stages (width doubling, stride 2 from the second), pooling, classifier."""

    def __init__(self, cfg: ResNetConfig, runner: Runner = plain_runner):
        super().__init__()
        self.runner = runner
        c = cfg.channels
        self.stem = nn.Sequential(nn.Conv2D(3, c, 3, padding=1, bias_attr=False), nn.BatchNorm2D(c),
                                  nn.ReLU())
        blocks, cin = [], c
        for stage, width in enumerate((c, 2 * c, 4 * c)):
            for i in range(cfg.blocks):
                blocks.append(BasicBlock(cin, width, stride=2 if stage > 0 and i == 0 else 1))
                cin = width
        self.blocks = nn.LayerList(blocks)
        self.head = nn.Linear(4 * c, cfg.classes)

    def forward(self, images: paddle.Tensor) -> paddle.Tensor:
        x = self.stem(images)
        for block in self.blocks:
            x = self.runner(block, x)
        return self.head(F.adaptive_avg_pool2d(x, 1).flatten(1))


def resnet_batch(cfg: ResNetConfig, step: int) -> tuple[paddle.Tensor, paddle.Tensor]:
    """Gaussian images and random labels for ``step``."""
    rng = np.random.default_rng(step)
    images = rng.standard_normal((cfg.batch, 3, cfg.image, cfg.image)).astype("float32")
    return paddle.to_tensor(images), paddle.to_tensor(rng.integers(0, cfg.classes, (cfg.batch,)))


def resnet_loss(logits: paddle.Tensor, labels: paddle.Tensor) -> paddle.Tensor:
    """Classification cross entropy."""
    return F.cross_entropy(logits, labels)
