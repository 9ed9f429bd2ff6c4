"""``mindspore.Layout``: a device matrix with axis names, and a tensor's map onto it.

On one device a layout changes nothing about the arithmetic; MindSpore checks it when it is
built and when a tensor map is taken from it, and ``Primitive.shard`` records its dictionary.
This class does the same checks with MindSpore's error texts.
"""

from __future__ import annotations

import copy
import math

__all__ = ["Layout"]

_INTERLEAVED = "interleaved_parallel"


def _check_names(device_matrix: tuple, alias_name: tuple) -> None:
    if not isinstance(device_matrix, tuple):
        raise TypeError(f"device_matrix must be tuple type, but got:{type(device_matrix)}")
    if not isinstance(alias_name, tuple):
        raise TypeError(f"alias_name must be tuple type, but got:{type(alias_name)}")
    if len(device_matrix) != len(alias_name):
        raise ValueError("device_matrix length should be equal to alias_name length")
    for size in device_matrix:
        if not isinstance(size, int):
            raise TypeError(f"The element of device_matrix must be int type, but got:{type(size)}")
    for name in alias_name:
        if not isinstance(name, str):
            raise TypeError(f"The element of alias_name must be str type, but got:{type(name)}")
        if not name:
            raise ValueError("The element of alias_name can not be empty.")
        if name == "None":
            raise ValueError(
                "The element of alias_name can not set 'None', because 'None' means no sharding."
            )
    if len(set(alias_name)) != len(alias_name):
        raise ValueError(f"Each element of alias_name {alias_name} should be different")
    if _INTERLEAVED in alias_name and alias_name.index(_INTERLEAVED) != len(alias_name) - 1:
        raise ValueError(
            f"When alias_name {alias_name} contains keyword 'interleaved_parallel',"
            " it should be at the last dim of alias_name, which means the virtual sharding."
        )


class Layout:
    """``mindspore.Layout(device_matrix, alias_name, rank_list=None)``.

    Example:
        >>> layout = Layout((2, 2), ("dp", "mp"))
        >>> layout("dp", "None").to_dict()["tensor_map"]
        (1, -1)
    """

    def __init__(self, device_matrix: tuple, alias_name: tuple, rank_list: list | None = None):
        _check_names(device_matrix, alias_name)
        count = math.prod(device_matrix)
        if rank_list is not None:
            if not isinstance(rank_list, list):
                raise TypeError(f"The rank_list should be a list, but got {type(rank_list).__name__}.")
            for rank in rank_list:
                if not isinstance(rank, int):
                    raise TypeError(f"The rank_list element should be int, but got {type(rank).__name__}.")
            if len(rank_list) != count:
                raise ValueError(
                    "The length of rank_list should be equal to the product of device_matrix, "
                    f"but got {len(rank_list)} and {count}."
                )
        self._device_shape = device_matrix
        self._alias_name = alias_name
        self._tensor_map = None
        self._rank_list = list(rank_list) if rank_list is not None else list(range(count))

    def _axis(self, name: str, written: list) -> int:
        if name == "None":
            return -1
        if name not in self._alias_name:
            raise ValueError(f"The axis {name} is not found in {self._alias_name}")
        if name in written:
            raise ValueError(f"The axis {name} has been set more than one in {self._alias_name}")
        written.append(name)
        return len(self._alias_name) - 1 - self._alias_name.index(name)

    def __call__(self, *tensor_map) -> Layout:
        """A copy of this layout with ``tensor_map`` (axis names, ``"None"``, or tuples of them)."""
        written: list = []
        self._tensor_map = tuple(
            tuple(self._axis(n, written) for n in entry)
            if isinstance(entry, tuple)
            else self._axis(entry, written)
            for entry in tensor_map
        )
        return copy.deepcopy(self)

    def to_dict(self) -> dict:
        if self._tensor_map is None:
            raise ValueError("The tensor_map of layout is None")
        return {
            "device_matrix": self._device_shape,
            "tensor_map": self._tensor_map,
            "interleaved_parallel": _INTERLEAVED in self._alias_name,
            "alias_name": self._alias_name,
            "rank_list": self._rank_list,
        }
