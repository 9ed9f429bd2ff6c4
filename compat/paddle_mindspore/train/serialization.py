"""``save_checkpoint``, ``load_checkpoint`` and ``load_param_into_net`` in MindSpore's formats.

Files are MindSpore 2.10's own ``.ckpt`` (protobuf) or ``.safetensors`` (``format=
"safetensors"``), byte for byte as real MindSpore writes them (see ``_ckpt_io.py``), so
checkpoints move between the two in both directions. Parameters are named by MindSpore's
names (``fc.weight``, ``bn.moving_mean``). Single device: ``integrated_save`` and
``remove_redundancy`` change nothing; ``async_save`` saves at once (the file is complete when
the call returns, as after MindSpore's wait). Encryption (``enc_key`` / ``dec_key``) is not
provided.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
import paddle

from .._tensor import parameter_like
from .._unprovided import unprovided_function as _unprovided_function
from .._validate import not_provided
from ..nn.optim import Optimizer
from ._ckpt_io import read_ckpt, read_safetensors, write_ckpt, write_safetensors
from ._surface import (
    Parameter,
    dtype_name,
    named_parameters,
    param_name,
    set_data,
    to_paddle_dtype,
    to_tensor,
)

__all__ = ["_get_merged_param_data", "save_checkpoint", "load_checkpoint", "load_param_into_net"]

_FLOATS = {"Float16", "Float32", "Float64", "BFloat16"}
_INTS = {"Int8", "Int16", "Int32", "Int64"}


def _check_format(format: str, api: str) -> None:
    if format not in ("ckpt", "safetensors"):
        raise ValueError(f"For '{api}', the format must be 'safetensors' or 'ckpt', but got {format}.")


def _check_instance(name: str, value: Any, types: tuple) -> Any:
    if not isinstance(value, types):
        raise TypeError(
            f"The argument '{name}' must be {' or '.join(t.__name__ for t in types)}, "
            f"but got {type(value).__name__}."
        )
    return value


def _array(value: paddle.Tensor) -> tuple[np.ndarray, str]:
    array = value.detach().numpy()  # bfloat16 comes back as its uint16 bit pattern, as stored
    return array, dtype_name(value.dtype)


def _optimizer_pairs(optimizer: Optimizer) -> list[tuple[str, Any]]:
    """An optimizer Cell's parameters in MindSpore's order: those it holds (network parameters
    included, as MindSpore saves it; ``nn.Momentum``'s and ``nn.SGD``'s float32
    ``momentum``), the per-parameter
    state the layer's own optimizers keep as plain tensors (``moments.<name>``), then its schedule
    cells' (``learning_rate`` of a list of rates: last, recorded with mindcv's train.py)."""
    pairs, scheduled = optimizer.own_and_cell_parameters()
    if not optimizer.defines_construct:
        pairs += optimizer.scalar_state()
    for prefix, values in optimizer.state():
        pairs += [(f"{prefix}.{param_name(p)}", v) for p, v in zip(optimizer.parameters, values, strict=True)]
    return pairs + scheduled


def _cell_pairs(cell: paddle.nn.Layer) -> list[tuple[str, Any]]:
    """A cell's parameters, then the state of the optimizers its cells hold (a training cell's
    ``optimizer``), each tensor once, as MindSpore saves a ``TrainOneStepCell``."""
    pairs = list(named_parameters(cell))
    seen = {id(v) for _, v in pairs}
    for layer in (cell, *cell.sublayers()):
        for value in vars(layer).values():
            if isinstance(value, Optimizer):
                fresh = [(k, v) for k, v in _optimizer_pairs(value) if id(v) not in seen]
                seen.update(id(v) for _, v in fresh)
                pairs += fresh
    return pairs


def _named(save_obj: Any, choice_func: Callable | None) -> list[tuple[str, Any]]:
    if isinstance(save_obj, paddle.nn.Layer):
        pairs = _cell_pairs(save_obj)
    elif isinstance(save_obj, Optimizer):
        pairs = _optimizer_pairs(save_obj)
    elif isinstance(save_obj, dict):
        pairs = list(save_obj.items())
        bad = [k for k, _ in pairs if not isinstance(k, str)]
        if bad:
            raise TypeError(
                f"For save_checkpoint, when save_obj is made up by dict, the key should be str, "
                f"but got the type of key is {type(bad[0])}"
            )
    elif save_obj and isinstance(save_obj[0], dict):
        pairs = [(item["name"], item["data"]) for item in save_obj]
    else:
        bad = [p for p in save_obj if not isinstance(p, Parameter)]
        if bad:
            raise TypeError(
                f"For save_checkpoint, when save_obj is made up by list of Parameter,"
                f"the param should be parameter, but got {type(bad[0])}"
            )
        pairs = [(param_name(p), p) for p in save_obj]
    return [(k, v) for k, v in pairs if choice_func is None or choice_func(k)]


def _record(name: str, value: Any) -> tuple:
    if isinstance(value, str):
        return name, value, "str"
    if isinstance(value, np.ndarray):
        value = paddle.to_tensor(value)
    elif not isinstance(value, paddle.Tensor):
        value = to_tensor(value)  # append_dict numbers: int -> Int64, float -> Float32, as MindSpore
    array, type_name = _array(value)
    return name, array, type_name


def _target(ckpt_file_name: Any, format: str) -> str:
    if not isinstance(ckpt_file_name, str):
        raise TypeError(
            f"For 'save_checkpoint', the parameter {ckpt_file_name} for checkpoint file name is "
            f"invalid,'ckpt_file_name' must be string, but got {type(ckpt_file_name)}."
        )
    path = os.path.realpath(ckpt_file_name)
    if os.path.isdir(path):
        raise IsADirectoryError(
            f"For 'save_checkpoint', the parameter `ckpt_file_name`: {path} is a "
            f"directory, it must be a file name."
        )
    return path if path.endswith(format) else f"{path}.{format}"


def save_checkpoint(
    save_obj: Any,
    ckpt_file_name: str,
    integrated_save: bool = True,
    async_save: Any = False,
    append_dict: dict | None = None,
    enc_key: bytes | None = None,
    enc_mode: str = "AES-GCM",
    choice_func: Callable | None = None,
    crc_check: bool = False,
    format: str = "ckpt",
    **kwargs: Any,
) -> None:
    """``mindspore.save_checkpoint``: a Cell, a list of Parameters (or of ``{"name", "data"}``
    dicts) or a dict of name to Parameter, to MindSpore's ``.ckpt`` or ``.safetensors``.

    Example:
        >>> import paddle_mindspore as ms
        >>> net = ms.nn.Dense(2, 3)
        >>> ms.save_checkpoint(net, "/tmp/dense.ckpt")
        >>> sorted(ms.load_checkpoint("/tmp/dense.ckpt"))
        ['bias', 'weight']
    """
    _check_format(format, "save_checkpoint")
    if not isinstance(save_obj, paddle.nn.Layer | list | dict | Optimizer):
        raise TypeError(
            f"For 'save_checkpoint', the parameter 'save_obj' must be nn.Cell, list or dict, "
            f"but got {type(save_obj)}."
        )
    path = _target(ckpt_file_name, format)
    _check_instance("integrated_save", integrated_save, (bool,))
    _check_instance("crc_check", crc_check, (bool,))
    if append_dict is not None:
        _check_instance("append_dict", append_dict, (dict,))
    if enc_key is not None:
        raise not_provided("mindspore.save_checkpoint(enc_key=...)", "encryption is MindSpore's C++")
    records = [_record(k, v) for k, v in _named(save_obj, choice_func)]
    records += [_record(k, v) for k, v in (append_dict or {}).items()]
    if format == "safetensors":
        if crc_check or any(t in ("BFloat16", "str") for _, _, t in records):
            raise not_provided("save_checkpoint(format='safetensors') with crc_check, bfloat16 or str values")
        write_safetensors(path, records)
    else:
        write_ckpt(path, records, crc_check)


def _check_prefix(prefix: Any) -> tuple:
    if prefix is None:
        return ()
    items = (prefix,) if isinstance(prefix, str) else prefix
    if not isinstance(items, list | tuple) or not all(isinstance(p, str) and p for p in items):
        raise TypeError(
            "For 'load_checkpoint', the type of 'specify_prefix' or 'filter_prefix' must be "
            f"string, list[string] or tuple[string], but got {type(prefix)}."
        )
    return tuple(items)


def _source(ckpt_file_name: Any, format: str) -> str:
    if not isinstance(ckpt_file_name, str):
        raise TypeError(
            f"For 'load_checkpoint', the argument 'ckpt_file_name' must be string, "
            f"but got {type(ckpt_file_name)}."
        )
    if not ckpt_file_name.endswith(format):
        raise ValueError(
            f"For 'load_checkpoint', the checkpoint file format must same with 'format', but "
            f"got file_name:'{ckpt_file_name}', format:'{format}'"
        )
    path = os.path.realpath(ckpt_file_name)
    if not os.path.exists(path):
        raise ValueError(
            f"For 'load_checkpoint', the checkpoint file: {path} does not exist, please check "
            f"whether the 'ckpt_file_name' is correct."
        )
    return path


def _parameter(name: str, value: np.ndarray, type_name: str) -> paddle.Tensor:
    tensor = paddle.to_tensor(value)
    if type_name == "BFloat16":
        tensor = tensor.view(paddle.bfloat16)
    return Parameter(tensor, name=name)


def load_checkpoint(
    ckpt_file_name: str,
    net: Any = None,
    strict_load: bool = False,
    filter_prefix: Any = None,
    dec_key: bytes | None = None,
    dec_mode: str = "AES-GCM",
    specify_prefix: Any = None,
    choice_func: Callable | None = None,
    crc_check: bool = False,
    remove_redundancy: bool = False,
    format: str = "ckpt",
) -> dict:
    """``mindspore.load_checkpoint``: ``{name: Parameter}`` (``str`` for saved strings), loaded
    into ``net`` too when given.

    Raises:
        ValueError: a missing file, a file that does not parse, a name filter that leaves nothing.
    """
    _check_format(format, "load_checkpoint")
    specify, exclude = _check_prefix(specify_prefix), _check_prefix(filter_prefix)
    _check_instance("crc_check", crc_check, (bool,))
    _check_instance("remove_redundancy", remove_redundancy, (bool,))
    if dec_key is not None:
        raise not_provided("mindspore.load_checkpoint(dec_key=...)", "decryption is MindSpore's C++")
    path = _source(ckpt_file_name, format)
    records = read_safetensors(path) if format == "safetensors" else read_ckpt(path, crc_check)
    use_choice = not specify and not exclude and choice_func is not None
    parameter_dict: dict = {}
    for name, value, type_name in records:
        if (specify and not name.startswith(specify)) or (exclude and name.startswith(exclude)):
            continue
        if use_choice and not choice_func(name):
            continue
        parameter_dict[name] = value if isinstance(value, str) else _parameter(name, value, type_name)
    if not parameter_dict:
        raise ValueError(
            "The loaded parameter dict is empty after filter or specify, please check whether "
            "'filter_prefix' or 'specify_prefix' are set correctly."
        )
    if net is not None:
        load_param_into_net(net, parameter_dict, strict_load, remove_redundancy)
    return parameter_dict


def _update(param: paddle.Tensor, new: Any, strict_load: bool) -> None:
    name = param_name(param)
    if not isinstance(new, paddle.Tensor):
        raise RuntimeError(f"For 'load_param_into_net', {name} in 'parameter_dict' is not a Tensor.")
    if list(param.shape) != list(new.shape):
        raise RuntimeError(
            f"For 'load_param_into_net', {name} in the argument 'net' should have the same shape as {name} "
            f"in the argument 'parameter_dict'. But got its shape {tuple(param.shape)} in the argument 'net' "
            f"and shape {tuple(new.shape)} in the argument 'parameter_dict'.May you need to check whether "
            f"the checkpoint you loaded is correct or the batch size and so on in the 'net' and "
            f"'parameter_dict' are same."
        )
    mine, theirs = dtype_name(param.dtype), dtype_name(new.dtype)
    convertible = {mine, theirs} <= _FLOATS or {mine, theirs} <= _INTS
    if mine != theirs and (strict_load or not convertible):
        raise RuntimeError(
            f"For 'load_param_into_net', {name} in the argument 'net' should have the same type as {name} "
            f"in the argument 'parameter_dict'. but got its type {mine} in the argument 'net' and type "
            f"{theirs} in the argument 'parameter_dict'.May you need to check whether the checkpoint you "
            f"loaded is correct."
        )
    set_data(param, new.astype(to_paddle_dtype(param.dtype)))


def load_param_into_net(
    net: Any, parameter_dict: dict, strict_load: bool = False, remove_redundancy: bool = False
) -> tuple[list, list]:
    """``mindspore.load_param_into_net``: returns ``(param_not_load, ckpt_not_load)``, MindSpore's
    two lists of names (network parameters left as they were; checkpoint entries unused).

    Without ``strict_load``, names still missing are retried with the prefix that the first
    matching checkpoint name adds (MindSpore's rule), and float (or int) dtypes convert.
    """
    if not isinstance(net, paddle.nn.Layer):
        raise TypeError(
            f"For 'load_param_into_net', the argument 'net' should be a Cell, but got {type(net)}."
        )
    if not isinstance(parameter_dict, dict):
        raise TypeError(
            f"For 'load_param_into_net', the argument 'parameter_dict' should be a dict, "
            f"but got {type(parameter_dict)}."
        )
    for key, value in parameter_dict.items():  # MindSpore's check: Tensors are refused
        if not isinstance(key, str) or not (parameter_like(value) or isinstance(value, str | list)):
            raise TypeError(
                "For 'parameter_dict', the element in the argument 'parameter_dict' should be a "
                f"'str' and 'Parameter' , but got {type(key)} and {type(value)}."
            )
    _check_instance("strict_load", strict_load, (bool,))
    params = list(named_parameters(net))
    param_not_load, ckpt_not_load = [], list(parameter_dict)
    for name, param in params:
        if name in parameter_dict:
            _update(param, parameter_dict[name], strict_load)
            ckpt_not_load.remove(name)
        elif not name.startswith("accu_grads"):
            param_not_load.append(name)
    if param_not_load and not strict_load:
        _load_with_prefix(params, parameter_dict, param_not_load, strict_load)
    return param_not_load, ckpt_not_load


def _load_with_prefix(params: list, parameter_dict: dict, param_not_load: list, strict_load: bool) -> None:
    """MindSpore's ``_load_dismatch_prefix_params``: strip the prefix that checkpoint names add."""
    prefix, longest = "", param_not_load[0]
    while prefix != longest and param_not_load:
        prefix = longest
        for missing_name in param_not_load:
            match = next((k for k in parameter_dict if k.endswith(missing_name)), None)
            if match is not None:
                prefix = match[: -len(missing_name)]
                break
        if prefix == longest:
            continue
        for name, param in params:
            if name in param_not_load and prefix + name in parameter_dict:
                _update(param, parameter_dict[prefix + name], strict_load)
                param_not_load.remove(name)


# Raise MissingAPIError when used (see _unprovided.py).
_get_merged_param_data = _unprovided_function("mindspore.train.serialization._get_merged_param_data")
