"""``mindspore.ops.functional`` (often imported as ``F``): the functional forms."""

from .._validate import missing as _missing
from ._amp import mixed_precision_cast
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
from ._functional_nn import binary_cross_entropy_with_logits, cross_entropy, interpolate, one_hot, pad
from ._graph import (
    assign,
    assign_add,
    clip_by_global_norm,
    depend,
    dtype,
    partial,
    rank,
    shape,
    tuple_to_array,
)
from ._index import (
    abs,
    add,
    clip_by_value,
    cos,
    div,
    eye,
    flatten,
    gather_elements,
    linspace,
    mul,
    reciprocal,
    reduce_sum,
    repeat_elements,
    sign,
    sin,
    sort,
    square,
    sub,
    tensor_scatter_elements,
    unstack,
)
from ._loss import kl_div, log_softmax

__all__ = [
    "dropout", "expand_dims", "matmul", "mean", "ones", "ones_like", "relu", "reshape", "softmax",
    "stop_gradient", "sum", "transpose", "zeros", "zeros_like",
] + [
    "arange", "bmm", "broadcast_to", "cast", "cat", "concat", "cumsum", "masked_fill", "permute", "split",
    "squeeze", "stack", "tile", "where", "amax", "amin", "argmax", "exp", "gelu", "log", "max", "min", "pow",
    "prod", "sigmoid", "silu", "sqrt", "std", "tanh", "var",
] + [
    "binary_cross_entropy_with_logits", "cross_entropy", "interpolate", "one_hot", "pad", "assign",
    "assign_add", "clip_by_global_norm", "depend", "dtype", "partial", "rank", "shape", "tuple_to_array",
    "abs", "add",
    "clip_by_value", "cos", "div", "eye", "flatten", "gather_elements", "linspace", "mul", "reciprocal",
    "reduce_sum", "repeat_elements", "sign", "sin", "sort", "square", "sub", "tensor_scatter_elements",
    "unstack", "kl_div", "log_softmax", "mixed_precision_cast",
]


def __getattr__(name: str):
    raise _missing("mindspore.ops.functional", name)
