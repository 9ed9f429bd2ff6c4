"""``mindspore._c_expression``: MindSpore's C++ bindings; the handful mindformers imports.

``MSContext`` answers the one query mindformers makes; ``swap_cache`` and ``is_reboot_node``
raise ``MissingAPIError`` when called (see ``_unprovided.py``).
"""

from .._unprovided import unprovided_function
from . import typing

__all__ = ["typing", "MSContext", "swap_cache", "is_reboot_node"]

swap_cache = unprovided_function("mindspore._c_expression.swap_cache")
is_reboot_node = unprovided_function("mindspore._c_expression.is_reboot_node")


class MSContext:
    """MindSpore's context singleton, for the one query mindformers makes: the Ascend chip
    version, ``""`` on a machine without Ascend (as MindSpore answers on CPU)."""

    _instance = None

    @classmethod
    def get_instance(cls) -> "MSContext":
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    def get_ascend_soc_version(self) -> str:
        return ""
