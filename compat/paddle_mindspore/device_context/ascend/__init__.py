"""``mindspore.device_context.ascend``: Ascend settings (not provided: no Ascend here).

Each name raises ``MissingAPIError`` when used; see ``_unprovided.py``.
"""

from ..._unprovided import unprovided_function

__all__ = ["op_precision"]

op_precision = unprovided_function("mindspore.device_context.ascend.op_precision")
