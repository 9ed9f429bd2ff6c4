"""The small network of the checkpoint records (runs under MindSpore and under the layer)."""

from __future__ import annotations

import numpy as np
from mindspore import nn


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, pad_mode="valid", has_bias=True)
        self.bn = nn.BatchNorm2d(2)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(32, 3)

    def construct(self, x):
        return self.fc(self.flatten(self.bn(self.conv(x))))


class Wrapped(nn.Cell):
    """The same network one level down: names gain the prefix ``backbone.``."""

    def __init__(self):
        super().__init__()
        self.backbone = Net()

    def construct(self, x):
        return self.backbone(x)


def weights():
    rng = np.random.RandomState(0)
    shapes = {
        "conv.weight": (2, 1, 3, 3),
        "conv.bias": (2,),
        "bn.moving_mean": (2,),
        "bn.moving_variance": (2,),
        "bn.gamma": (2,),
        "bn.beta": (2,),
        "fc.weight": (3, 32),
        "fc.bias": (3,),
    }
    out = {k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
    out["bn.moving_variance"] = np.abs(out["bn.moving_variance"]) + 0.5
    return out
