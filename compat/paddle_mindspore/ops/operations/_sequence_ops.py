"""``mindspore.ops.operations._sequence_ops``: graph-mode sequence primitives (not provided).

Each name raises ``MissingAPIError`` when used; see ``_unprovided.py``.
"""

from ..._unprovided import unprovided_class

__all__ = ["TensorToScalar"]

TensorToScalar = unprovided_class("mindspore.ops.operations._sequence_ops.TensorToScalar")
