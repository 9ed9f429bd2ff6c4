"""The pipeline nodes behind ``map``, ``batch``, ``shuffle``, ``repeat``, ``project``, ``rename``,
``skip`` and ``take``."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from ._columns import as_row
from ._node import Node, names
from .config import generator

__all__ = [
    "MapDataset",
    "BatchDataset",
    "ShuffleDataset",
    "RepeatDataset",
    "ProjectDataset",
    "RenameDataset",
    "SliceDataset",
]


def _index(columns: list[str], names: list[str], api: str) -> list[int]:
    unknown = [n for n in names if n not in columns]
    if unknown:
        raise RuntimeError(
            f"Invalid column, column name: {unknown[0]} does not exist in the dataset columns "
            f"{columns} ({api})."
        )
    return [columns.index(n) for n in names]


class MapDataset(Node):
    """MindSpore's column rule: as many outputs as inputs replace them in place; otherwise the
    outputs come first, then the columns that were not inputs (recorded from MindSpore 2.10)."""

    def __init__(self, child: Node, operations: Any, input_columns: Any, output_columns: Any):
        ops = list(operations) if isinstance(operations, list | tuple) else [operations]
        if not ops or not all(callable(op) for op in ops):
            raise TypeError(
                f"Argument operations with value {operations!r} is not callable or a list of callables."
            )
        columns = list(child.columns)
        inputs = columns[:1] if input_columns is None else names(input_columns, "input_columns")
        outputs = inputs if output_columns is None else names(output_columns, "output_columns")
        self._ops, self._in = ops, _index(columns, inputs, "map")
        kept = [i for i in range(len(columns)) if i not in self._in]
        self._same = len(inputs) == len(outputs)
        self._kept = kept
        layout = list(columns)
        if self._same:
            for position, name in zip(self._in, outputs, strict=True):
                layout[position] = name
        else:
            layout = outputs + [columns[i] for i in kept]
        self._width = len(outputs)
        super().__init__([child], layout)

    def _apply(self, values: tuple) -> tuple:
        for op in self._ops:
            result = op(*values)
            values = result if isinstance(result, tuple) else (result,)
        return as_row(values, self._width, "map")

    def _epoch(self) -> Iterator[tuple]:
        for row in self.children[0]._epoch():
            out = self._apply(tuple(row[i] for i in self._in))
            if self._same:
                new = list(row)
                for position, value in zip(self._in, out, strict=True):
                    new[position] = value
                yield tuple(new)
            else:
                yield out + tuple(row[i] for i in self._kept)


def _stack(values: list, column: str) -> np.ndarray:
    shapes = {v.shape for v in values}
    if len(shapes) > 1:
        raise RuntimeError(
            f"Inconsistent batch shapes, batch operation expects same shape for each data row, "
            f"but got inconsistent shape in column '{column}': {sorted(shapes)}"
        )
    return np.stack(values)


class BatchDataset(Node):
    def __init__(self, child: Node, batch_size: int, drop_remainder: bool):
        if not isinstance(drop_remainder, bool):
            raise TypeError(
                f"Argument drop_remainder with value {drop_remainder!r} is not of type [<class 'bool'>]."
            )
        self._batch, self._drop = batch_size, drop_remainder
        super().__init__([child], child.columns)

    def _emit(self, rows: list) -> tuple:
        return tuple(_stack([r[c] for r in rows], name) for c, name in enumerate(self.columns))

    def _epoch(self) -> Iterator[tuple]:
        rows: list = []
        for row in self.children[0]._epoch():
            rows.append(row)
            if len(rows) == self._batch:
                yield self._emit(rows)
                rows = []
        if rows and not self._drop:
            yield self._emit(rows)

    def _size(self) -> int:
        n = self.children[0]._size()
        return n // self._batch if self._drop else math.ceil(n / self._batch)

    def batch_size(self) -> int:
        return self._batch


class ShuffleDataset(Node):
    """MindSpore's buffer shuffle: a row drawn at random from a buffer of ``buffer_size`` rows."""

    def __init__(self, child: Node, buffer_size: int):
        self._buffer = buffer_size
        super().__init__([child], child.columns)

    def _epoch(self) -> Iterator[tuple]:
        rng, buffer = generator(), []
        for row in self.children[0]._epoch():
            buffer.append(row)
            if len(buffer) == self._buffer:
                yield buffer.pop(int(rng.integers(len(buffer))))
        while buffer:
            yield buffer.pop(int(rng.integers(len(buffer))))


class RepeatDataset(Node):
    def __init__(self, child: Node, count: int | None):
        self._count = count
        super().__init__([child], child.columns)

    def _epoch(self) -> Iterator[tuple]:
        done = 0
        while self._count is None or done < self._count:
            yield from self.children[0]._epoch()
            done += 1

    def _size(self) -> int:  # an endless repeat reports one pass, as MindSpore 2.10 does
        return self.children[0]._size() * (self._count or 1)

    def repeat_count(self) -> int:
        return -1 if self._count is None else self._count


class ProjectDataset(Node):
    def __init__(self, child: Node, columns: list[str]):
        self._pick = _index(child.columns, columns, "project")
        super().__init__([child], columns)

    def _epoch(self) -> Iterator[tuple]:
        for row in self.children[0]._epoch():
            yield tuple(row[i] for i in self._pick)


class RenameDataset(Node):
    def __init__(self, child: Node, old: list[str], new: list[str]):
        if len(old) != len(new):
            raise ValueError("input_columns and output_columns list are not the same size.")
        columns = list(child.columns)
        for position, name in zip(_index(columns, old, "rename"), new, strict=True):
            columns[position] = name
        super().__init__([child], columns)

    def _epoch(self) -> Iterator[tuple]:
        return self.children[0]._epoch()


class SliceDataset(Node):
    """``skip(n)`` and ``take(n)``."""

    def __init__(self, child: Node, start: int, count: int | None):
        self._start, self._count = start, count
        super().__init__([child], child.columns)

    def _epoch(self) -> Iterator[tuple]:
        for index, row in enumerate(self.children[0]._epoch()):
            if self._count is not None and index >= self._start + self._count:
                return
            if index >= self._start:
                yield row

    def _size(self) -> int:
        left = max(self.children[0]._size() - self._start, 0)
        return left if self._count is None else min(left, self._count)
