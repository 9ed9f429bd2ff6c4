"""``mindspore.numpy``: NumPy's commonly used functions on tensors, with MindSpore's default
dtypes (int32 for Python ints, float32 for floats); other names raise ``MissingAPIError``."""

from .._dtype import bool_, float16, float32, float64, int8, int16, int32, int64, uint8
from .._validate import missing as _missing
from ._creation import *  # noqa: F403  (listed in _creation.__all__)
from ._creation import __all__ as _creation
from ._ops import *  # noqa: F403  (listed in _ops.__all__)
from ._ops import __all__ as _ops

__all__ = [*_creation, *_ops, "bool_", "float16", "float32", "float64", "int8", "int16", "int32", "int64",
           "uint8"]


def __getattr__(name: str):
    raise _missing("mindspore.numpy", name)
