"""``mindspore.ops.auto_generate``: MindSpore's generated primitives (see ``gen_ops_prim``)."""

from ..._validate import missing as _missing
from . import gen_ops_prim
from .gen_ops_prim import *  # noqa: F403  (listed in gen_ops_prim.__all__)
from .gen_ops_prim import __all__ as _generated

__all__ = ["gen_ops_prim", *_generated]


def __getattr__(name: str):
    raise _missing("mindspore.ops.auto_generate", name)
