"""Padding cells: ``nn.Pad``, ``nn.ConstantPad2d``, ``nn.ZeroPad2d``."""

from __future__ import annotations

from typing import Any

import paddle

from .._cell import Cell
from ..ops._functional_nn import pad

__all__ = ["Pad", "ConstantPad2d", "ZeroPad2d"]


class Pad(Cell):
    """``nn.Pad(paddings, mode='CONSTANT')``: ``paddings[d] = (before, after)`` for each leading
    dimension ``d``; modes ``'CONSTANT'`` (zeros) and ``'REFLECT'``."""

    def __init__(self, paddings: Any, mode: str = "CONSTANT"):
        super().__init__()
        if mode not in ("CONSTANT", "REFLECT", "SYMMETRIC"):
            raise ValueError(f"For 'Pad', the 'mode' must be in ['CONSTANT', 'REFLECT', 'SYMMETRIC'], "
                             f"but got {mode}.")
        self.paddings, self.mode = tuple(tuple(p) for p in paddings), mode

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        flat = []
        for before, after in reversed(self.paddings):  # ops.pad pads the last dimension first
            flat += [before, after]
        return pad(x, flat, mode={"CONSTANT": "constant", "REFLECT": "reflect",
                                  "SYMMETRIC": "symmetric"}[self.mode])


class ConstantPad2d(Cell):
    """``nn.ConstantPad2d(padding, value)``: ``padding`` an int or ``(left, right, top, bottom)``."""

    def __init__(self, padding: Any, value: float):
        super().__init__()
        self.padding = [padding] * 4 if isinstance(padding, int) else list(padding)
        if len(self.padding) != 4:
            raise ValueError(f"For 'ConstantPad2d', the 'padding' must be an int or a tuple of 4 ints, "
                             f"but got {padding!r}.")
        self.value = value

    def construct(self, x: paddle.Tensor) -> paddle.Tensor:
        return pad(x, self.padding, mode="constant", value=self.value)


class ZeroPad2d(ConstantPad2d):
    """``nn.ZeroPad2d(padding)``."""

    def __init__(self, padding: Any):
        super().__init__(padding, 0.0)
