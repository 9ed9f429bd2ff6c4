"""``mindspore.runtime``: device runtime controls.

Each name raises ``MissingAPIError`` when used; see ``_unprovided.py``.
"""

from .._unprovided import unprovided_function

__all__ = ["synchronize"]

synchronize = unprovided_function("mindspore.runtime.synchronize")
