"""``mindspore.ops.auto_generate.gen_ops_prim``: the generated primitive classes.

MindSpore generates most of its primitives (``ops.operations`` re-exports them); those this
layer has are the same classes as in ``ops.operations``. The fused and Ascend-only kernels
mindformers imports for its MoE, inference and optimizer modules raise ``MissingAPIError``
when constructed (see ``_unprovided.py``).
"""

from ..._unprovided import unprovided_class
from .._array import Cast, Concat, ExpandDims, Reshape, Transpose
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
    # not provided (below)
    "AddExt", "ArgMaxWithValue", "Chunk", "Cos", "CumsumExt", "Dense", "Erf", "FmodScalar",
    "FusedAddTopKDiv", "GeLU", "GroupedMatmul", "IndexSelect", "MaskedSelect", "MeanExt", "Minimum",
    "MoeDistributeCombine", "MoeDistributeDispatch", "MoeFinalizeRouting", "MoeInitRoutingV2",
    "MoeTokenUnpermute", "Muls", "OneHotExt", "Outer", "Scatter", "Sin", "SortExt", "Split",
    "StackExt", "SubExt", "SumExt", "Swiglu", "TopkExt", "ZerosLikeExt",
]

AddExt = unprovided_class("mindspore.ops.auto_generate.AddExt")
ArgMaxWithValue = unprovided_class("mindspore.ops.auto_generate.ArgMaxWithValue")
Chunk = unprovided_class("mindspore.ops.auto_generate.Chunk")
Cos = unprovided_class("mindspore.ops.auto_generate.Cos")
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
Minimum = unprovided_class("mindspore.ops.auto_generate.Minimum")
MoeDistributeCombine = unprovided_class("mindspore.ops.auto_generate.MoeDistributeCombine")
MoeDistributeDispatch = unprovided_class("mindspore.ops.auto_generate.MoeDistributeDispatch")
MoeFinalizeRouting = unprovided_class("mindspore.ops.auto_generate.MoeFinalizeRouting")
MoeInitRoutingV2 = unprovided_class("mindspore.ops.auto_generate.MoeInitRoutingV2")
MoeTokenUnpermute = unprovided_class("mindspore.ops.auto_generate.MoeTokenUnpermute")
Muls = unprovided_class("mindspore.ops.auto_generate.Muls")
OneHotExt = unprovided_class("mindspore.ops.auto_generate.OneHotExt")
Outer = unprovided_class("mindspore.ops.auto_generate.Outer")
Scatter = unprovided_class("mindspore.ops.auto_generate.Scatter")
Sin = unprovided_class("mindspore.ops.auto_generate.Sin")
SortExt = unprovided_class("mindspore.ops.auto_generate.SortExt")
Split = unprovided_class("mindspore.ops.auto_generate.Split")
StackExt = unprovided_class("mindspore.ops.auto_generate.StackExt")
SubExt = unprovided_class("mindspore.ops.auto_generate.SubExt")
SumExt = unprovided_class("mindspore.ops.auto_generate.SumExt")
Swiglu = unprovided_class("mindspore.ops.auto_generate.Swiglu")
TopkExt = unprovided_class("mindspore.ops.auto_generate.TopkExt")
ZerosLikeExt = unprovided_class("mindspore.ops.auto_generate.ZerosLikeExt")
