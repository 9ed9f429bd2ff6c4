"""``mindspore.ops.operations`` (often imported as ``P``): the operator classes."""

from .._primitive import Primitive
from .._validate import missing as _missing
from ._array import BiasAdd, Cast, Concat, ExpandDims, Flatten, Reshape, Squeeze, Transpose
from ._graph import AssignAdd
from ._math import Add, BatchMatMul, Div, Exp, MatMul, Mul, Neg, RealDiv, ReduceMean, ReduceSum, Sqrt, Sub
from ._more_primitives import *  # noqa: F403  (listed in _more_primitives.__all__)
from ._more_primitives import __all__ as _more
from ._nn import Conv2D, Conv2DTranspose, Dropout, ReLU, Sigmoid, Softmax, Tanh

__all__ = [
    "Primitive", "AssignAdd", "BiasAdd", "Cast", "Concat", "ExpandDims", "Flatten", "Reshape", "Squeeze",
    "Transpose",
    "Add", "BatchMatMul", "Div", "Exp", "MatMul", "Mul", "Neg", "RealDiv", "ReduceMean", "ReduceSum",
    "Sqrt", "Sub", "Conv2D", "Conv2DTranspose", "Dropout", "ReLU", "Sigmoid", "Softmax", "Tanh",
    *_more,
]


def __getattr__(name: str):
    raise _missing("mindspore.ops.operations", name)
