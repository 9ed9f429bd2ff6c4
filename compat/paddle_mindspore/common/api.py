"""``mindspore.common.api``: ``jit`` (the function runs eagerly, see ``_jit.py``).

``_pynative_executor`` (MindSpore's PyNative executor object) and ``flops_collection`` (graph
FLOPs) are not provided: they raise ``MissingAPIError`` when used.
"""

from .._jit import jit
from .._unprovided import unprovided_function, unprovided_object

__all__ = ["jit", "_pynative_executor", "flops_collection"]

_pynative_executor = unprovided_object("mindspore.common.api._pynative_executor")
flops_collection = unprovided_function("mindspore.common.api.flops_collection")
