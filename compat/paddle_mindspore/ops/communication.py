"""``mindspore.ops.communication``: collective functions over devices (not provided: one device).

Each name raises ``MissingAPIError`` when called; see ``_unprovided.py``.
"""

from .._unprovided import unprovided_function

_NAMES = [
    "all_gather_into_tensor",
    "all_reduce",
    "all_to_all",
    "all_to_all_single",
    "reduce_scatter_tensor",
    "broadcast",
    "barrier",
]
globals().update({name: unprovided_function(f"mindspore.ops.communication.{name}") for name in _NAMES})

__all__ = list(_NAMES)
