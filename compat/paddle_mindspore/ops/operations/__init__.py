"""``mindspore.ops.operations`` (often imported as ``P``): the operator classes."""

from ..._primitive import Primitive
from ..._unprovided import unprovided_class as _unprovided_class
from ..._validate import missing as _missing
from .._array import BiasAdd, Cast, Concat, ExpandDims, Flatten, Reshape, Squeeze, Transpose
from .._ext_primitives import ArgMaxWithValue, Cos, Minimum, Sin, Split
from .._fused_primitives import Morph, RmsNorm
from .._glm_primitives import (
    ApplyRotaryPosEmb,
    Equal,
    Less,
    PagedAttention,
    PagedAttentionMask,
    ReshapeAndCache,
    Stack,
    Tril,
)
from .._graph import AssignAdd
from .._llm_primitives import (
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
from .._math import Add, BatchMatMul, Div, Exp, MatMul, Mul, Neg, RealDiv, ReduceMean, ReduceSum, Sqrt, Sub
from .._more_primitives import (
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
from .._nn import Conv2D, Conv2DTranspose, Dropout, ReLU, Sigmoid, Softmax, Tanh

__all__ = [
    "Primitive",
    "AssignAdd",
    "BiasAdd",
    "Cast",
    "Concat",
    "ExpandDims",
    "Flatten",
    "Reshape",
    "Squeeze",
    "Transpose",
    "Add",
    "BatchMatMul",
    "Div",
    "Exp",
    "MatMul",
    "Mul",
    "Neg",
    "RealDiv",
    "ReduceMean",
    "ReduceSum",
    "Sqrt",
    "Sub",
    "Conv2D",
    "Conv2DTranspose",
    "Dropout",
    "ReLU",
    "Sigmoid",
    "Softmax",
    "Tanh",
    "Gather",
    "GatherD",
    "LessEqual",
    "Log",
    "NotEqual",
    "Pow",
    "Maximum",
    "Addcmul",
    "ReduceMax",
    "Rsqrt",
    "MoveTo",
    "StridedSlice",
    "CumSum",
    "Mod",
    "Morph",
    "RmsNorm",
    "ArgMaxWithValue",
    "Cos",
    "Minimum",
    "Sin",
    "Split",
    "nn_ops",
    "comm_ops",
    "_inner_ops",
    "Sort",
    "Unstack",
    "OneHot",
    "Zeros",
    "Ones",
    "ZerosLike",
    "OnesLike",
    "Tile",
    "Shape",
    "Identity",
    "Square",
    "Sign",
    "Reciprocal",
    "Pad",
    "L2Normalize",
    "LpNorm",
    "ResizeBilinearV2",
    "ResizeNearestNeighbor",
    "LayerNorm",
    "ApplyRotaryPosEmb", "Equal", "Less", "PagedAttention", "PagedAttentionMask", "ReshapeAndCache",
    "Stack", "Tril",
]

from . import _inner_ops, comm_ops, nn_ops  # noqa: E402  (submodules, after the classes they may use)

# Imported by mindformers' MoE and optimizer modules, not used by a dense model: they raise
# MissingAPIError when constructed (see _unprovided.py).
CumSum = _unprovided_class("mindspore.ops.operations.CumSum")
Mod = _unprovided_class("mindspore.ops.operations.Mod")


def __getattr__(name: str):
    raise _missing("mindspore.ops.operations", name)
