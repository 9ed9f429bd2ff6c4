"""``mindspore.ops.function``: the package of MindSpore's functional ops; the same forms as
``mindspore.ops.functional``."""

from .._validate import missing as _missing
from .functional import *  # noqa: F403  (every functional form, listed in functional.__all__)
from .functional import __all__ as _functional

__all__ = list(_functional)


def __getattr__(name: str):
    raise _missing("mindspore.ops.function", name)
