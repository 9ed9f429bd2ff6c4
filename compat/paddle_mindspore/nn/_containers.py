"""``nn.SequentialCell``, ``nn.CellList`` and ``nn.CellDict``."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import Any

import paddle

from .._cell import Cell
from .._cell_names import name_appended

__all__ = ["SequentialCell", "CellList", "CellDict"]


def _check_cell(item: Any, owner: str) -> paddle.nn.Layer:
    if not isinstance(item, paddle.nn.Layer):
        raise TypeError(f"For '{owner}', each item must be a Cell, but got {type(item).__name__}.")
    return item


class SequentialCell(Cell):
    """``nn.SequentialCell(*cells)`` or ``nn.SequentialCell([cells])`` / ``(OrderedDict)``."""

    def __init__(self, *args: Any):
        super().__init__()
        items = args[0] if len(args) == 1 and isinstance(args[0], list | tuple | OrderedDict) else args
        if isinstance(items, OrderedDict):
            named = items.items()
        else:
            named = ((str(i), c) for i, c in enumerate(items))
        for name, cell in named:
            self.add_sublayer(name, _check_cell(cell, "SequentialCell"))

    def __getitem__(self, index: int) -> paddle.nn.Layer:
        return list(self._sub_layers.values())[index]

    def __len__(self) -> int:
        return len(self._sub_layers)

    def append(self, cell: paddle.nn.Layer) -> SequentialCell:
        key = str(len(self))
        self.add_sublayer(key, _check_cell(cell, "SequentialCell"))
        name_appended(self, key, cell)
        return self

    def construct(self, x: Any) -> Any:
        for cell in self._sub_layers.values():
            x = cell(x)
        return x


class CellList(Cell):
    """``nn.CellList(args=None)``: a list of cells, indexable and iterable."""

    def __init__(self, args: Iterable | None = None):
        super().__init__()
        for cell in args or ():
            self.append(cell)

    def _cell_list(self) -> list:
        return list(self._sub_layers.values())

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return CellList(self._cell_list()[index])
        return self._cell_list()[index]

    def __setitem__(self, index: int, cell: paddle.nn.Layer) -> None:
        key = list(self._sub_layers)[index]
        self._sub_layers[key] = _check_cell(cell, "CellList")

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self) -> Iterator:
        return iter(self._cell_list())

    def append(self, cell: paddle.nn.Layer) -> CellList:
        key = str(len(self))
        self.add_sublayer(key, _check_cell(cell, "CellList"))
        name_appended(self, key, cell)
        return self

    def extend(self, cells: Iterable) -> CellList:
        for cell in cells:
            self.append(cell)
        return self

    def insert(self, index: int, cell: paddle.nn.Layer) -> None:
        cells = self._cell_list()
        cells.insert(index, _check_cell(cell, "CellList"))
        self._sub_layers.clear()
        for i, c in enumerate(cells):
            self.add_sublayer(str(i), c)

    def construct(self, *args: Any) -> Any:
        raise TypeError("CellList is a container; call its cells, not the list")


class CellDict(Cell):
    """``nn.CellDict(args=None)``: cells by name (insertion order), like a dict."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__()
        if args:
            self.update(args[0])

    def __getitem__(self, key: str) -> paddle.nn.Layer:
        return self._sub_layers[key]

    def __setitem__(self, key: str, cell: paddle.nn.Layer) -> None:
        if not isinstance(key, str):
            raise TypeError(f"For 'CellDict', the key must be a str, but got {type(key).__name__}.")
        self.add_sublayer(key, _check_cell(cell, "CellDict"))

    def __delitem__(self, key: str) -> None:
        del self._sub_layers[key]

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self) -> Iterator[str]:
        return iter(self._sub_layers)

    def __contains__(self, key: object) -> bool:
        return key in self._sub_layers

    def keys(self) -> Iterable[str]:
        return self._sub_layers.keys()

    def values(self) -> Iterable[paddle.nn.Layer]:
        return self._sub_layers.values()

    def items(self) -> Iterable[tuple[str, paddle.nn.Layer]]:
        return self._sub_layers.items()

    def pop(self, key: str) -> paddle.nn.Layer:
        return self._sub_layers.pop(key)

    def clear(self) -> None:
        self._sub_layers.clear()

    def update(self, cells: Any) -> None:
        items = cells.items() if isinstance(cells, dict | OrderedDict | CellDict) else cells
        for key, cell in items:
            self[key] = cell

    def construct(self, *args: Any) -> Any:
        raise TypeError("CellDict is a container; call its cells, not the dict")
