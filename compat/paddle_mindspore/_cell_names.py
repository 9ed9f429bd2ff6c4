"""MindSpore's parameter names and parameter order for cells.

MindSpore names a parameter after the attribute that holds it and, each time a cell is
assigned into another cell (``auto_prefix=True``, the default), renames every parameter in it
to its path from the outer cell: ``fc.weight``, ``blocks.0.ln1.gamma`` (an explicitly given
name survives only until its cell is nested). ``parameters_and_names()`` walks cells in
pre-order, each cell's own parameters first; BatchNorm's moving statistics are parameters
there (buffers here), listed in the order MindSpore creates them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import paddle
from paddle.base.framework import EagerParamBase

__all__ = ["adopt", "ms_parameters", "DEFAULT_NAME", "name_appended"]

DEFAULT_NAME = "Parameter"


def adopt(owner: paddle.nn.Layer, attribute: str, value: Any) -> None:
    """Name ``value`` (a parameter or a cell just assigned to ``owner.attribute``) as MindSpore does."""
    if isinstance(value, EagerParamBase):
        if getattr(value, "_ms_name", DEFAULT_NAME) == DEFAULT_NAME:
            value._ms_name = attribute
    elif isinstance(value, paddle.nn.Layer) and getattr(owner, "_ms_auto_prefix", True):
        for path, tensor in ms_parameters(value, "", True):
            tensor._ms_name = f"{attribute}.{path}"


def _own(layer: paddle.nn.Layer) -> list[tuple[str, paddle.Tensor]]:
    paths = layer.__dict__.get("_ms_param_paths", {})  # ParameterTuple members (Cell._register_tuple)
    items = [(paths.get(n, n), p) for n, p in layer._parameters.items() if p is not None]
    # running statistics a ParameterTuple attribute registered here, at their place in the order
    for offset, (anchor, path, tensor) in enumerate(layer.__dict__.get("_ms_tuple_buffers", ())):
        items.insert(anchor + offset, (path, tensor))
    items += [(n, layer._buffers[n]) for n in getattr(layer, "_ms_buffer_params", ()) if n in layer._buffers]
    order = getattr(layer, "_ms_parameter_order", None)
    if order:
        items.sort(key=lambda item: order.index(item[0]) if item[0] in order else len(order))
    return items


def ms_parameters(cell: paddle.nn.Layer, prefix: str, recurse: bool) -> Iterator[tuple[str, paddle.Tensor]]:
    """``(path, tensor)`` for every MindSpore parameter of ``cell``, each once, in MindSpore's order."""
    seen: set[int] = set()
    layers = cell.named_sublayers(prefix=prefix, include_self=True) if recurse else [(prefix, cell)]
    for layer_prefix, layer in layers:
        for name, tensor in _own(layer):
            if id(tensor) not in seen:
                seen.add(id(tensor))
                yield (f"{layer_prefix}.{name}" if layer_prefix else name), tensor


def _list_prefix(cells: list[tuple[str, paddle.nn.Layer]]) -> str:
    """MindSpore's ``_get_prefix_and_index``: the prefix a list container's parameters carry,
    read off the current names of its first two cells' first parameters."""
    firsts = []
    for key, cell in cells:
        params = list(ms_parameters(cell, "", True))
        if params:
            firsts.append((key, getattr(params[0][1], "_ms_name", params[0][0]).split(".")))
        if len(firsts) == 2:
            break
    prefix = ""
    if not firsts:
        return prefix
    (first_key, split), second = firsts[0], (firsts[1] if len(firsts) > 1 else None)
    for idx, part in enumerate(split):
        if part == first_key:
            prefix = ".".join(split[:idx]) + "." if idx else ""
            if second is not None and len(second[1]) > idx and second[1][idx] == second[0]:
                break
    return prefix


def name_appended(container: paddle.nn.Layer, key: str, cell: paddle.nn.Layer) -> None:
    """Name the parameters of ``cell``, appended to a CellList/SequentialCell under ``key``, as
    MindSpore's ``append`` does: the prefix it reads off the cells already there, then ``key.``.
    (After an empty list was assigned to its parent, that prefix is not the parent's path:
    MindSpore's own names, e.g. mindcv's Swin ``0.blocks.1.blocks.0.norm1.gamma``.)"""
    if not getattr(container, "_ms_auto_prefix", True):
        return
    prefix = _list_prefix([(k, c) for k, c in container.named_children() if k != key])
    for path, tensor in ms_parameters(cell, "", True):
        tensor._ms_name = f"{prefix}{key}.{path}"
