"""The optimizer entries MindSpore writes into a training network's checkpoint.

MindSpore's optimizers are Cells whose state is parameters: ``global_step`` (int32, shape
``(1,)``), ``learning_rate``, and per optimizer its own (``nn.Momentum``: ``momentum`` and
``moments.<param>``), listed after the network's parameters (recorded from MindSpore 2.10).
The layer's optimizers keep that state as plain values; this module names it as MindSpore
does. Optimizers other than ``Momentum`` contribute ``global_step`` and ``learning_rate`` only
(compat/README.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._surface import param_name

__all__ = ["optimizer_entries"]


def optimizer_entries(optimizer: Any, global_step: int) -> list[tuple[str, Any]]:
    if optimizer is None:
        return []
    entries = [
        ("global_step", np.array([global_step], np.int32)),
        ("learning_rate", np.array(optimizer.learning_rate, np.float32)),
    ]
    moments = getattr(optimizer, "moments", None)
    if isinstance(moments, list) and hasattr(optimizer, "momentum"):
        entries.append(("momentum", np.array(optimizer.momentum, np.float32)))
        entries += [
            (f"moments.{param_name(p)}", m) for p, m in zip(optimizer.parameters, moments, strict=True)
        ]
    return entries
