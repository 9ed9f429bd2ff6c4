"""The optimizer entries MindSpore writes into a training network's checkpoint.

MindSpore's optimizers are Cells whose state is parameters: ``global_step`` (int32, shape
``(1,)``), ``learning_rate``, and per optimizer its own (``nn.Momentum``: ``momentum`` and
``moments.<param>``; ``nn.SGD``: ``momentum``, ``accum.<param>``, ``stat.<param>``), listed
after the network's parameters (recorded from MindSpore 2.10). The layer's optimizers keep
that state as plain values; this module names it as MindSpore does: ``Optimizer.scalar_state()``
and ``Optimizer.state()`` give each optimizer's entries (``Adagrad``, ``RMSProp``, ``Lamb``
too); the others contribute ``global_step`` and ``learning_rate`` only (compat/README.md).
Optimizers written on MindSpore's Cell interface (mindcv's) hold their state as Parameters:
those are the entries, under their own names.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._surface import param_name

__all__ = ["optimizer_entries"]


def optimizer_entries(optimizer: Any, global_step: int) -> list[tuple[str, Any]]:
    if optimizer is None:
        return []
    if optimizer.defines_construct:  # its state is the Parameters it holds, named by MindSpore
        network = {id(p) for p in optimizer.parameters}
        return [(name, p) for name, p in optimizer.parameters_and_names() if id(p) not in network]
    entries = [
        ("global_step", np.array([global_step], np.int32)),
        ("learning_rate", optimizer.checkpoint_learning_rate()),
    ]
    entries += optimizer.scalar_state()
    for prefix, values in optimizer.state():
        pairs = zip(optimizer.parameters, values, strict=True)
        entries += [(f"{prefix}.{param_name(p)}", v) for p, v in pairs]
    return entries
