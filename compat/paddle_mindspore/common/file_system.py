"""``mindspore.common.file_system``: MindIO checkpoint storage (not provided).

Each name raises ``MissingAPIError`` when used; see ``_unprovided.py``.
"""

from .._unprovided import unprovided_function

__all__ = ["mindio_preload", "set_mindio_server_info"]

mindio_preload = unprovided_function("mindspore.common.file_system.mindio_preload")
set_mindio_server_info = unprovided_function("mindspore.common.file_system.set_mindio_server_info")
