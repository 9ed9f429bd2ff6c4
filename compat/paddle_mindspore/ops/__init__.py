"""``mindspore.ops``: operator classes (with ``recompute()``), functional forms and grad transforms.

The functional forms are those of ``mindspore.ops.functional`` (``ops.relu is
ops.functional.relu``), re-exported here whole; the operator classes are those of
``mindspore.ops.operations`` (its ``__all__`` is their one list), taken with ``import *`` as
MindSpore builds its ``ops``.
"""

from .._grad import GradOperation, grad, value_and_grad
from .._primitive import Primitive
from .._validate import missing as _missing
from . import auto_generate, communication, composite, function, functional, operations, primitive
from ._graph import HyperMap, Map, MultitypeFuncGraph, constexpr
from .functional import *  # noqa: F403  (every functional form, listed in functional.__all__)
from .operations import *  # noqa: F403  (the operator classes: operations.__all__, their one list)

__all__ = [
    "Primitive", "GradOperation", "grad", "value_and_grad", "functional", "operations", "auto_generate",
    "communication", "composite", "function", "primitive", "HyperMap", "Map",
    "MultitypeFuncGraph", "constexpr",
    *operations.__all__,
    *functional.__all__,
]


def __getattr__(name: str):
    raise _missing("mindspore.ops", name)
