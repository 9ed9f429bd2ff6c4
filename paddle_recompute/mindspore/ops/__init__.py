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
from ._functional_array import (
    arange,
    bmm,
    broadcast_to,
    cast,
    cat,
    concat,
    cumsum,
    masked_fill,
    permute,
    split,
    squeeze,
    stack,
    tile,
    where,
)
from ._functional_math import (
    amax,
    amin,
    argmax,
    exp,
    gelu,
    log,
    max,
    min,
    pow,
    prod,
    sigmoid,
    silu,
    sqrt,
    std,
    tanh,
    var,
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
] + [
    "arange", "bmm", "broadcast_to", "cast", "cat", "concat", "cumsum", "masked_fill", "permute", "split",
    "squeeze", "stack", "tile", "where", "amax", "amin", "argmax", "exp", "gelu", "log", "max", "min", "pow",
    "prod", "sigmoid", "silu", "sqrt", "std", "tanh", "var",
]


def __getattr__(name: str):
    raise _missing("mindspore.ops", name)
