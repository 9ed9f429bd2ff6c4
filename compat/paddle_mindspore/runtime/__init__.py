"""``mindspore.runtime``: device runtime controls.

``set_memory`` and ``set_cpu_affinity`` act as on one CPU device (see ``_settings.py``); the
other names raise ``MissingAPIError`` when used (see ``_unprovided.py``).
"""

from .._unprovided import unprovided_function
from ._settings import set_cpu_affinity, set_memory

__all__ = ["synchronize", "set_memory", "set_cpu_affinity"]

synchronize = unprovided_function("mindspore.runtime.synchronize")
