"""``mindspore.ops``: operator classes (with ``recompute()``), functional forms and grad transforms."""

from .._grad import GradOperation, grad, value_and_grad
from .._primitive import Primitive
from .._validate import missing as _missing
from . import functional, operations
from ._array import BiasAdd, Cast, Concat, ExpandDims, Flatten, Reshape, Squeeze, Transpose
from ._functional import (
    dropout,
    expand_dims,
    matmul,
    mean,
    ones,
    ones_like,
    relu,
    reshape,
    softmax,
    stop_gradient,
    sum,
    transpose,
    zeros,
    zeros_like,
)
from ._math import Add, BatchMatMul, Div, Exp, MatMul, Mul, Neg, RealDiv, ReduceMean, ReduceSum, Sqrt, Sub
from ._nn import Conv2D, Dropout, ReLU, Sigmoid, Softmax, Tanh

__all__ = [
    "Primitive", "GradOperation", "grad", "value_and_grad", "functional", "operations",
    "BiasAdd", "Cast", "Concat", "ExpandDims", "Flatten", "Reshape", "Squeeze", "Transpose",
    "Add", "BatchMatMul", "Div", "Exp", "MatMul", "Mul", "Neg", "RealDiv", "ReduceMean", "ReduceSum",
    "Sqrt", "Sub", "Conv2D", "Dropout", "ReLU", "Sigmoid", "Softmax", "Tanh",
    "dropout", "expand_dims", "matmul", "mean", "ones", "ones_like", "relu", "reshape", "softmax",
    "stop_gradient", "sum", "transpose", "zeros", "zeros_like",
]


def __getattr__(name: str):
    raise _missing("mindspore.ops", name)
