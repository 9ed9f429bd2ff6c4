"""``mindspore.ops.operations._infer_ops``: Ascend inference kernels (not provided).

Each name raises ``MissingAPIError`` when used; see ``_unprovided.py``.
"""

from ..._unprovided import unprovided_class

__all__ = ["QuantV2"]

QuantV2 = unprovided_class("mindspore.ops.operations._infer_ops.QuantV2")
