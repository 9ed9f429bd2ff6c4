"""``mindspore.ops.auto_generate.gen_ops_prim``: the generated primitive classes.

MindSpore generates most of its primitives (``ops.operations`` re-exports them); those this
layer has are the same classes as in ``ops.operations``. The fused and Ascend-only kernels
mindformers imports for its MoE, inference and optimizer modules raise ``MissingAPIError``
when constructed (see ``_unprovided.py``).
"""

from ..._unprovided import unprovided_class
from .._array import Cast, Concat, ExpandDims, Reshape, Transpose
from .._ext_primitives import (
    AddExt,
    ArgMaxWithValue,
    Cos,
    InplaceCopy,
    Minimum,
    Muls,
    OneHotExt,
    Outer,
    Sin,
    Split,
    StackExt,
    SubExt,
    SumExt,
    ZerosLikeExt,
)
from .._fused_primitives import DropoutExt, FlashAttentionScore, RmsNorm
from .._glm_primitives import (
    ApplyRotaryPosEmb,
    Equal,
    Less,
    PagedAttention,
    PagedAttentionMask,
    ReshapeAndCache,
    SplitWithSize,
)
from .._graph import AssignAdd
from .._llm_primitives import (
    Addcmul,
    Gather,
    GatherD,
    LessEqual,
    Log,
    Maximum,
    NotEqual,
    Pow,
    ReduceMax,
    Rsqrt,
    SiLU,
    StridedSlice,
)
from .._math import Add, BatchMatMul, Div, Exp, MatMul, Mul, Neg, RealDiv, ReduceMean, ReduceSum, Sqrt, Sub
from .._more_primitives import OneHot, Ones, OnesLike, Shape, Square, Tile, Zeros
from .._nn import ReLU, Sigmoid, Softmax

__all__ = [
    "Cast", "Concat", "ExpandDims", "Reshape", "Transpose", "AssignAdd", "Pow", "Maximum", "Addcmul",
    "Gather", "GatherD", "LessEqual", "Log", "NotEqual", "ReduceMax", "Rsqrt", "SiLU", "StridedSlice",
    "Add", "BatchMatMul", "Div", "Exp", "MatMul", "Mul", "Neg", "RealDiv", "ReduceMean", "ReduceSum",
    "Sqrt", "Sub", "OneHot", "Ones", "OnesLike", "Shape", "Square", "Tile", "Zeros", "ReLU", "Sigmoid",
    "Softmax", "ApplyRotaryPosEmb", "Equal", "Less", "PagedAttention", "PagedAttentionMask",
    "ReshapeAndCache", "SplitWithSize",
    "AddExt", "ArgMaxWithValue", "Cos", "InplaceCopy", "Minimum", "Muls", "OneHotExt", "Outer", "Sin",
    "Split", "StackExt", "SubExt", "SumExt", "ZerosLikeExt", "DropoutExt", "FlashAttentionScore", "RmsNorm",
    # not provided (below)
    "Chunk", "CumsumExt", "Dense", "Erf", "FmodScalar", "FusedAddTopKDiv", "GeLU", "GroupedMatmul",
    "IndexSelect", "MaskedSelect", "MeanExt", "MoeDistributeCombine", "MoeDistributeDispatch",
    "MoeFinalizeRouting", "MoeInitRoutingV2", "MoeTokenUnpermute", "Scatter", "SortExt", "Swiglu",
    "TopkExt",
]

Chunk = unprovided_class("mindspore.ops.auto_generate.Chunk")
CumsumExt = unprovided_class("mindspore.ops.auto_generate.CumsumExt")
Dense = unprovided_class("mindspore.ops.auto_generate.Dense")
Erf = unprovided_class("mindspore.ops.auto_generate.Erf")
FmodScalar = unprovided_class("mindspore.ops.auto_generate.FmodScalar")
FusedAddTopKDiv = unprovided_class("mindspore.ops.auto_generate.FusedAddTopKDiv")
GeLU = unprovided_class("mindspore.ops.auto_generate.GeLU")
GroupedMatmul = unprovided_class("mindspore.ops.auto_generate.GroupedMatmul")
IndexSelect = unprovided_class("mindspore.ops.auto_generate.IndexSelect")
MaskedSelect = unprovided_class("mindspore.ops.auto_generate.MaskedSelect")
MeanExt = unprovided_class("mindspore.ops.auto_generate.MeanExt")
MoeDistributeCombine = unprovided_class("mindspore.ops.auto_generate.MoeDistributeCombine")
MoeDistributeDispatch = unprovided_class("mindspore.ops.auto_generate.MoeDistributeDispatch")
MoeFinalizeRouting = unprovided_class("mindspore.ops.auto_generate.MoeFinalizeRouting")
MoeInitRoutingV2 = unprovided_class("mindspore.ops.auto_generate.MoeInitRoutingV2")
MoeTokenUnpermute = unprovided_class("mindspore.ops.auto_generate.MoeTokenUnpermute")
Scatter = unprovided_class("mindspore.ops.auto_generate.Scatter")
SortExt = unprovided_class("mindspore.ops.auto_generate.SortExt")
Swiglu = unprovided_class("mindspore.ops.auto_generate.Swiglu")
TopkExt = unprovided_class("mindspore.ops.auto_generate.TopkExt")
