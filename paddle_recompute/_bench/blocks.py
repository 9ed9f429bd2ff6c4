"""The runner protocol shared by the benchmark models.

Every benchmark model applies its repeated blocks as ``x = model.runner(block, x)``: the
runner decides, per block, whether and how the block is recomputed (per-block choices look
the block up, e.g. by ``id(block)``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from paddle import nn

__all__ = ["Runner", "plain_runner"]

Runner = Callable[[nn.Layer, Any], Any]


def plain_runner(block: nn.Layer, x: Any) -> Any:
    """Run the block directly (no recompute)."""
    return block(x)
