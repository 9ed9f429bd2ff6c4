"""MindSpore compatibility layer: MindSpore model code, recompute calls included, on Paddle.

Use as ``import paddle_mindspore as mindspore`` (or run an unmodified script with
``python -m paddle_mindspore script.py``). See compat/README.md for the API map and
every semantic difference.
"""

from . import (
    _checkparam,
    amp,
    boost,
    common,
    communication,
    context,
    dataset,
    log,
    mint,
    nn,
    numpy,
    ops,
    parallel,
    runtime,
    train,
)
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
from ._layout import Layout
from ._seed import get_seed, set_seed
from ._surface.install import install_tensor_methods, tensor_methods_installed, uninstall_tensor_methods
from ._tensor import Parameter, ParameterTuple, Tensor
from ._unprovided import unprovided_class as _unprovided_class
from ._unprovided import unprovided_function as _unprovided_function
from ._validate import MissingAPIError
from ._validate import missing as _missing
from .common import dtype
from .common.sparse_tensor import RowTensor
from .context import (
    GRAPH_MODE,
    PYNATIVE_MODE,
    ParallelMode,
    get_auto_parallel_context,
    get_context,
    reset_auto_parallel_context,
    set_auto_parallel_context,
    set_context,
    set_device,
)
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
    "boost", "communication", "numpy", "jit", "RowTensor", "amp", "Layout", "ParallelMode",
    "get_auto_parallel_context", "set_auto_parallel_context", "reset_auto_parallel_context", "set_device",
    "log", "mint", "parallel", "runtime", "_checkparam", "__version__",
]

# Imported at module level by mindformers, never used on one device in PyNative mode: they
# raise MissingAPIError when used (see _unprovided.py).
DeviceCtx = _unprovided_class("mindspore.DeviceCtx")
JitConfig = _unprovided_class("mindspore.JitConfig")
Profiler = _unprovided_class("mindspore.Profiler")
Symbol = _unprovided_class("mindspore.Symbol")
get_ckpt_path_with_strategy = _unprovided_function("mindspore.get_ckpt_path_with_strategy")
load_checkpoint_async = _unprovided_function("mindspore.load_checkpoint_async")
mutable = _unprovided_function("mindspore.mutable")


__version__ = "2.10.0"  # the MindSpore release whose API and recorded behaviour this layer mirrors

install_tensor_methods()  # for MindSpore code only: NOTE [ Caller-scoped Tensor semantics ]


def __getattr__(name: str):
    raise _missing("mindspore", name)
