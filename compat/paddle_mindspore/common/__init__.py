"""``mindspore.common``: Tensor, Parameter, dtypes, seeding and initialisers."""

from .._jit import jit
from .._seed import get_seed, set_seed
from .._tensor import Parameter, ParameterTuple, Tensor
from .._validate import missing as _missing
from . import api, dtype, file_system, generator, initializer, parameter, sparse_tensor, tensor
from .lazy_inline import lazy_inline
from .recompute import recompute  # as in MindSpore, the name is the function, not the module
from .sparse_tensor import RowTensor

__all__ = ["Tensor", "Parameter", "ParameterTuple", "dtype", "initializer", "parameter", "tensor", "set_seed",
           "get_seed", "recompute", "sparse_tensor", "RowTensor", "api", "jit", "lazy_inline", "file_system",
           "generator"]


def __getattr__(name: str):
    raise _missing("mindspore.common", name)
