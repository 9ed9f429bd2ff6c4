"""``mindspore.utils``: Ascend fault-tolerance helpers (not provided).

Each name raises ``MissingAPIError`` when used; see ``_unprovided.py``.
"""

from .._unprovided import unprovided_class, unprovided_function

__all__ = ["stress_detect", "_tft_handler"]

stress_detect = unprovided_function("mindspore.utils.stress_detect")
_tft_handler = unprovided_class("mindspore.utils._tft_handler")
