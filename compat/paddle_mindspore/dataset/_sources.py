"""``GeneratorDataset`` and ``NumpySlicesDataset``: rows from Python objects."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from .._validate import not_provided
from ._columns import as_array, as_row
from ._node import Node, names
from ._pipeline import Dataset
from ._source import MappableSource, source_sampler
from .samplers import Sampler

__all__ = ["GeneratorDataset", "NumpySlicesDataset"]


def _column_names(column_names: Any, schema: Any) -> list[str]:
    if schema is not None:
        raise not_provided("mindspore.dataset.GeneratorDataset(schema=...)", "give column_names")
    if column_names is None:
        raise ValueError("Neither columns_names nor schema are provided.")
    return names(column_names, "column_names")


class _RandomAccess(MappableSource):
    def __init__(self, source: Any, columns: list[str], sampler: Sampler):
        super().__init__(columns, sampler)
        self._source = source

    def _count(self) -> int:
        return len(self._source)

    def _row(self, index: int) -> tuple:
        return as_row(self._source[index], len(self.columns), "GeneratorDataset")


class _Iterable(Node):
    def __init__(self, source: Any, columns: list[str], num_samples: int | None):
        super().__init__((), columns)
        self._source, self._limit = source, num_samples or None

    def _epoch(self) -> Iterator[tuple]:
        items = self._source() if callable(self._source) else iter(self._source)
        for position, item in enumerate(items):
            if self._limit is not None and position >= self._limit:
                return
            yield as_row(item, len(self.columns), "GeneratorDataset")

    def _size(self) -> int:
        return sum(1 for _ in self._epoch())  # MindSpore also runs the generator once to count


def GeneratorDataset(
    source: Any,
    column_names: Any = None,
    column_types: Any = None,
    schema: Any = None,
    num_samples: int | None = None,
    num_parallel_workers: int = 1,
    shuffle: bool | None = None,
    sampler: Any = None,
    num_shards: int | None = None,
    shard_id: int | None = None,
    python_multiprocessing: bool = True,
    max_rowsize: Any = None,
    batch_sampler: Any = None,
    collate_fn: Any = None,
) -> Dataset:
    """``mindspore.dataset.GeneratorDataset``: rows from a generator function, an iterable, or a
    random-access object (``__getitem__`` + ``__len__``, shuffled unless ``shuffle=False``; an
    iterable source is read in order whatever ``shuffle`` says, as MindSpore 2.10 does).

    Python ``int`` values become int64 and ``float`` float64, as in MindSpore.
    """
    columns = _column_names(column_names, schema)
    chosen = source_sampler(
        "GeneratorDataset",
        num_samples,
        shuffle,
        column_types=column_types,
        sampler=sampler,
        num_shards=num_shards,
        shard_id=shard_id,
        batch_sampler=batch_sampler,
        collate_fn=collate_fn,
    )
    if hasattr(source, "__getitem__") and hasattr(source, "__len__"):
        return Dataset(_RandomAccess(source, columns, chosen))
    if any(v is not None for v in (sampler, num_shards, shard_id)):
        raise not_provided("mindspore.dataset.GeneratorDataset(sampler=/num_shards=) on an iterable source",
                           "give the source __getitem__ and __len__")
    if not callable(source) and not hasattr(source, "__iter__"):
        raise TypeError(
            "Input `source` function of GeneratorDataset should be callable, iterable or random "
            "accessible, commonly it should implement one of the method like yield, __getitem__ or "
            "__next__(__iter__)."
        )
    return Dataset(_Iterable(source, columns, num_samples))


class _Slices(MappableSource):
    def __init__(self, columns: list[str], arrays: list[np.ndarray], sampler: Sampler):
        super().__init__(columns, sampler)
        self._arrays = arrays

    def _count(self) -> int:
        return len(self._arrays[0])

    def _row(self, index: int) -> tuple:
        return tuple(np.asarray(a[index]) for a in self._arrays)


def NumpySlicesDataset(
    data: Any,
    column_names: Any = None,
    num_samples: int | None = None,
    num_parallel_workers: int = 1,
    shuffle: bool | None = None,
    sampler: Any = None,
    num_shards: int | None = None,
    shard_id: int | None = None,
) -> Dataset:
    """``mindspore.dataset.NumpySlicesDataset``: rows sliced along the first axis of ``data`` (a
    list: one column; a tuple: a column per item; a dict: a column per key)."""
    sampler = source_sampler(
        "NumpySlicesDataset", num_samples, shuffle, sampler=sampler, num_shards=num_shards, shard_id=shard_id
    )
    if isinstance(data, dict):
        columns, arrays = list(data), [as_array(v) for v in data.values()]
    elif isinstance(data, tuple):
        columns, arrays = [f"column_{i}" for i in range(len(data))], [as_array(v) for v in data]
    elif isinstance(data, list | np.ndarray):
        columns, arrays = ["column_0"], [as_array(data)]
    else:
        raise TypeError(
            f"Unsupported data type: {type(data)}, only support some common python data type, like "
            f"list, tuple, dict, and numpy array."
        )
    if column_names is not None:
        columns = names(column_names, "column_names")
    lengths = {len(a) for a in arrays}
    if len(lengths) != 1 or len(columns) != len(arrays):
        raise ValueError(
            f"NumpySlicesDataset: every column needs the same first dimension and a name, but got "
            f"lengths {sorted(lengths)} for names {columns}."
        )
    return Dataset(_Slices(columns, arrays, sampler))
