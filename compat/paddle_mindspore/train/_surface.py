"""What ``mindspore.train`` uses of the layer's Tensor surface and cell naming, in one place
(so a move of those private modules changes this file only)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import paddle

from .._cell_names import ms_parameters
from .._dtype import to_paddle_dtype
from .._surface.data import dtype_name, param_name, set_data
from .._tensor import Parameter, to_tensor

__all__ = [
    "named_parameters",
    "Parameter",
    "to_tensor",
    "to_paddle_dtype",
    "dtype_name",
    "param_name",
    "set_data",
]


def named_parameters(network: paddle.nn.Layer) -> Iterator[tuple[str, Any]]:
    """``(MindSpore name, parameter)`` for every parameter of ``network`` (BatchNorm's moving
    statistics included), in MindSpore's order."""
    for _, param in ms_parameters(network, "", True):
        yield param_name(param), param
