"""``mindspore.communication._comm_helper``: communication-group internals (one device: not provided).

Each name raises ``MissingAPIError`` when used; see ``_unprovided.py``.
"""

from .._unprovided import unprovided_function

__all__ = ["_is_initialized", "_get_group_map", "_remove_group_info"]

_get_group_map = unprovided_function("mindspore.communication._comm_helper._get_group_map")
_remove_group_info = unprovided_function("mindspore.communication._comm_helper._remove_group_info")


def _is_initialized() -> bool:
    """Whether ``mindspore.communication.init`` has run: never here (``init`` raises)."""
    return False
