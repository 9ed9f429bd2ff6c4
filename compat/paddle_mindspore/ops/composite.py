"""``mindspore.ops.composite`` (often imported as ``C``): the composite operations the layer has."""

from .._grad import GradOperation
from .._validate import missing as _missing
from ._graph import HyperMap, Map, MultitypeFuncGraph
from .functional import ones_like, zeros_like

__all__ = ["add_flags", "GradOperation", "HyperMap", "Map", "MultitypeFuncGraph", "ones_like", "zeros_like"]


def add_flags(fn=None, **flags):
    """``C.add_flags(**flags)``: marks a function with graph-compilation flags (kept in
    ``fn._func_graph_flags``); in PyNative mode the function runs as written."""

    def mark(function):
        function._func_graph_flags = {**getattr(function, "_func_graph_flags", {}), **flags}
        return function

    return mark(fn) if fn is not None else mark


def __getattr__(name: str):
    raise _missing("mindspore.ops.composite", name)
