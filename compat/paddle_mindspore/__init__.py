"""MindSpore compatibility layer: MindSpore model code, recompute calls included, on Paddle.

Use as ``import paddle_mindspore as mindspore`` (or run an unmodified script with
``python -m paddle_mindspore script.py``). See compat/README.md for the API map and
every semantic difference.
"""

from . import amp, boost, common, communication, context, dataset, nn, numpy, ops, train
from ._alias import import_alias_installed, install_import_alias, uninstall_import_alias
from ._api import recompute
from ._cell import RecomputeMixin
from ._dtype import bfloat16, bool_, float16, float32, float64, int8, int16, int32, int64, uint8
from ._grad import grad, value_and_grad
from ._jit import jit
from ._layer_optin import (
    disable_layer_recompute,
    enable_layer_recompute,
    install_layer_recompute,
    layer_recompute_installed,
    uninstall_layer_recompute,
)
from ._seed import get_seed, set_seed
from ._surface.install import install_tensor_methods, tensor_methods_installed, uninstall_tensor_methods
from ._tensor import Parameter, ParameterTuple, Tensor
from ._validate import MissingAPIError
from ._validate import missing as _missing
from .common import dtype
from .common.sparse_tensor import RowTensor
from .context import GRAPH_MODE, PYNATIVE_MODE, get_context, set_context
from .train import (
    Accuracy,
    Callback,
    CheckpointConfig,
    Loss,
    LossMonitor,
    Metric,
    Model,
    ModelCheckpoint,
    Precision,
    Recall,
    RunContext,
    TimeMonitor,
    Top1CategoricalAccuracy,
    Top5CategoricalAccuracy,
    TopKCategoricalAccuracy,
    load_checkpoint,
    load_param_into_net,
    save_checkpoint,
)

__all__ = [
    "common", "context", "nn", "ops", "dtype", "recompute", "grad", "value_and_grad", "Tensor", "Parameter",
    "ParameterTuple", "set_seed", "get_seed", "set_context", "get_context", "GRAPH_MODE", "PYNATIVE_MODE",
    "bfloat16", "bool_", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
    "RecomputeMixin", "enable_layer_recompute", "disable_layer_recompute", "install_layer_recompute",
    "uninstall_layer_recompute", "layer_recompute_installed", "install_import_alias",
    "uninstall_import_alias", "import_alias_installed", "MissingAPIError", "install_tensor_methods",
    "uninstall_tensor_methods", "tensor_methods_installed", "dataset", "train", "save_checkpoint",
    "load_checkpoint", "load_param_into_net", "Model", "Callback", "RunContext", "LossMonitor", "TimeMonitor",
    "ModelCheckpoint", "CheckpointConfig", "Metric", "Accuracy", "Loss", "Precision", "Recall",
    "TopKCategoricalAccuracy", "Top1CategoricalAccuracy", "Top5CategoricalAccuracy",
    "boost", "communication", "numpy", "jit", "RowTensor", "amp",
]


install_tensor_methods()  # for MindSpore code only: NOTE [ Caller-scoped Tensor semantics ]


def __getattr__(name: str):
    raise _missing("mindspore", name)
