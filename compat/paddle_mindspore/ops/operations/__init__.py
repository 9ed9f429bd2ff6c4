"""``mindspore.ops.operations`` (often imported as ``P``): the operator classes.

This module is the one list of the layer's operator classes: ``mindspore.ops`` takes them with
``from .operations import *``, as MindSpore builds its ``ops`` (so the two cannot drift apart).
Each class is exposed here exactly when MindSpore 2.10 exposes it here (recorded in
``compat/tests/recorded/ops_primitive_names.json``): ``Primitive`` itself is ``ops.Primitive``
only, and the submodules (``nn_ops``, ``comm_ops``, ...) are attributes, not star-exported.
"""

from ..._unprovided import unprovided_class as _unprovided_class
from ..._validate import missing as _missing
from .._amp import AllReduce
from .._array import BiasAdd, Cast, Concat, ExpandDims, Flatten, Reshape, Squeeze, Transpose
from .._communication import ReduceOp
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
from .._loss import KLDivLoss
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
from ..auto_generate.gen_ops_prim import Dense, Erf, GeLU, MaskedSelect
from . import _inner_ops, comm_ops, nn_ops  # noqa: F401  (attributes of this module, as in MindSpore)
from .comm_ops import AllGather, AlltoAll, AlltoAllV, AlltoAllVC, Broadcast, ReduceScatter

# Imported by mindformers' MoE and optimizer modules, not used by a dense model: they raise
# MissingAPIError when constructed (see _unprovided.py).
CumSum = _unprovided_class("mindspore.ops.operations.CumSum")
Mod = _unprovided_class("mindspore.ops.operations.Mod")

__all__ = [
    "BiasAdd", "Cast", "Concat", "ExpandDims", "Flatten", "Reshape", "Squeeze", "Transpose",
    "Add", "BatchMatMul", "Div", "Exp", "MatMul", "Mul", "Neg", "RealDiv", "ReduceMean", "ReduceSum",
    "Sqrt", "Sub",
    "Conv2D", "Conv2DTranspose", "Dropout", "ReLU", "Sigmoid", "Softmax", "Tanh",
    "AssignAdd", "KLDivLoss", "AllReduce", "ReduceOp",
    "Identity", "L2Normalize", "LayerNorm", "LpNorm", "OneHot", "Ones", "OnesLike", "Pad", "Reciprocal",
    "ResizeBilinearV2", "ResizeNearestNeighbor", "Shape", "Sign", "Sort", "Square", "Tile", "Unstack",
    "Zeros", "ZerosLike",
    "Addcmul", "Gather", "GatherD", "LessEqual", "Log", "Maximum", "MoveTo", "NotEqual", "Pow", "ReduceMax",
    "Rsqrt", "StridedSlice",  # SiLU is in auto_generate and _inner_ops only, as in MindSpore
    "ApplyRotaryPosEmb", "Equal", "Less", "PagedAttention", "PagedAttentionMask", "ReshapeAndCache",
    "Stack", "Tril",
    "ArgMaxWithValue", "Cos", "Minimum", "Sin", "Split", "Morph", "RmsNorm",
    # not provided (raise MissingAPIError when constructed), exposed where MindSpore exposes them
    "CumSum", "Mod", "Dense", "Erf", "GeLU", "MaskedSelect",
    "AllGather", "AlltoAll", "AlltoAllV", "AlltoAllVC", "Broadcast", "ReduceScatter",
]


def __getattr__(name: str):
    raise _missing("mindspore.ops.operations", name)
