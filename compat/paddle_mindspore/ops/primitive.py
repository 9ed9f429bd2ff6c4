"""``mindspore.ops.primitive``: ``Primitive`` and the constant-function decorators.

In PyNative mode ``constexpr`` and ``_primexpr`` functions run as plain Python calls.
"""

from .._primitive import Primitive
from ._graph import constexpr

__all__ = ["Primitive", "constexpr", "_primexpr"]


def _primexpr(fn=None, get_instance=True, reuse_result=True):
    """MindSpore's ``_primexpr``: like ``constexpr``, the function is called directly."""
    return constexpr(fn, get_instance=get_instance, reuse_result=reuse_result)
