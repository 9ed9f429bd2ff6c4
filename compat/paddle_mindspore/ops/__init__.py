"""``mindspore.ops``: operator classes (with ``recompute()``), functional forms and grad transforms.

The functional forms are those of ``mindspore.ops.functional`` (``ops.relu is
ops.functional.relu``), re-exported here whole.
"""

from .._grad import GradOperation, grad, value_and_grad
from .._primitive import Primitive
from .._validate import missing as _missing
from . import auto_generate, communication, composite, function, functional, operations, primitive
from ._amp import AllReduce
from ._array import BiasAdd, Cast, Concat, ExpandDims, Flatten, Reshape, Squeeze, Transpose
from ._communication import ReduceOp
from ._ext_primitives import ArgMaxWithValue, Cos, Minimum, Sin, Split
from ._fused_primitives import Morph, RmsNorm
from ._glm_primitives import (
    ApplyRotaryPosEmb,
    Equal,
    Less,
    PagedAttention,
    PagedAttentionMask,
    ReshapeAndCache,
    Stack,
    Tril,
)
from ._graph import AssignAdd, HyperMap, Map, MultitypeFuncGraph, constexpr
from ._llm_primitives import (
    Addcmul,
    Gather,
    GatherD,
    LessEqual,
    Log,
    Maximum,
    MoveTo,
    NotEqual,
    Pow,
    ReduceMax,
    Rsqrt,
    StridedSlice,
)
from ._loss import KLDivLoss
from ._math import Add, BatchMatMul, Div, Exp, MatMul, Mul, Neg, RealDiv, ReduceMean, ReduceSum, Sqrt, Sub
from ._more_primitives import (
    Identity,
    L2Normalize,
    LayerNorm,
    LpNorm,
    OneHot,
    Ones,
    OnesLike,
    Pad,
    Reciprocal,
    ResizeBilinearV2,
    ResizeNearestNeighbor,
    Shape,
    Sign,
    Sort,
    Square,
    Tile,
    Unstack,
    Zeros,
    ZerosLike,
)
from ._nn import Conv2D, Conv2DTranspose, Dropout, ReLU, Sigmoid, Softmax, Tanh
from .functional import *  # noqa: F403  (every functional form, listed in functional.__all__)

__all__ = [
    "Primitive", "GradOperation", "grad", "value_and_grad", "functional", "operations", "auto_generate",
    "communication", "composite", "function", "primitive",
    "BiasAdd", "Cast", "Concat", "ExpandDims", "Flatten", "Reshape", "Squeeze", "Transpose",
    "Add", "BatchMatMul", "Div", "Exp", "MatMul", "Mul", "Neg", "RealDiv", "ReduceMean", "ReduceSum",
    "Sqrt", "Sub", "Conv2D", "Conv2DTranspose", "Dropout", "ReLU", "Sigmoid", "Softmax", "Tanh",
    "ReduceOp", "AssignAdd", "HyperMap", "Map", "MultitypeFuncGraph", "constexpr", "Identity", "L2Normalize",
    "LayerNorm",
    "LpNorm",
    "OneHot",
    "Ones", "OnesLike", "Pad", "Reciprocal", "ResizeBilinearV2", "ResizeNearestNeighbor", "Shape", "Sign",
    "Sort", "Square", "Tile", "Unstack", "Zeros", "ZerosLike", "KLDivLoss", "AllReduce",
    "Addcmul", "Gather", "GatherD", "LessEqual", "Log", "Maximum", "MoveTo", "NotEqual", "Pow", "ReduceMax",
    "Rsqrt", "StridedSlice",  # SiLU is in ops.auto_generate only, as in MindSpore
    "ApplyRotaryPosEmb", "Equal", "Less", "PagedAttention", "PagedAttentionMask", "ReshapeAndCache",
    "Stack", "Tril",
    "ArgMaxWithValue", "Cos", "Minimum", "Sin", "Split", "Morph", "RmsNorm",  # as in MindSpore's ops
    *functional.__all__,
]


def __getattr__(name: str):
    raise _missing("mindspore.ops", name)
