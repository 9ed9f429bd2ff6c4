"""``mindspore.dataset.Dataset``: a pipeline of nodes, each pulling rows from its child.

A row is a tuple of numpy arrays, one per column. Every node knows its column names and its
size; ``_epoch()`` yields one epoch of rows. Nodes run in the calling thread, one row at a
time (MindSpore runs them in worker threads; the rows are the same without shuffling).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .._validate import missing, not_provided
from .config import generator

__all__ = ["Dataset"]

INT32_MAX = 2147483647


def _names(value: Any, what: str) -> list[str]:
    names = [value] if isinstance(value, str) else list(value) if isinstance(value, list | tuple) else None
    if not names or not all(isinstance(n, str) and n for n in names):
        raise TypeError(
            f"Argument {what} with value {value!r} is not of type [<class 'str'>, <class 'list'>]."
        )
    return names


def _check_count(value: Any, what: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(
            f"Argument {what} with value {value!r} is not of type [<class 'int'>], but got {type(value)}."
        )
    if not low <= value <= INT32_MAX:
        raise ValueError(f"Input {what} is not within the required interval of [{low}, {INT32_MAX}].")
    return value


def _no_extra(
    api: str,
    kwargs: dict,
    accepted: Sequence[str] = ("num_parallel_workers", "python_multiprocessing", "max_rowsize", "cache"),
) -> None:
    for key, value in kwargs.items():
        if key not in accepted and value is not None:
            raise not_provided(f"mindspore.dataset.Dataset.{api}({key}=...)")


class Dataset:
    """The operations every MindSpore dataset has (``map``, ``batch``, ``shuffle``, ...)."""

    def __init__(self, children: Sequence[Dataset] = (), columns: Sequence[str] = ()):
        self.children = list(children)
        self._columns = list(columns)

    # what a node defines -------------------------------------------------------------
    def _epoch(self) -> Iterator[tuple]:
        raise NotImplementedError

    def _size(self) -> int:
        return self.children[0]._size()

    # information -----------------------------------------------------------------------
    def get_col_names(self) -> list[str]:
        return list(self._columns)

    def get_dataset_size(self) -> int:
        """Rows (batches after ``batch``) in one epoch."""
        return self._size()

    def get_batch_size(self) -> int:
        return self.children[0].get_batch_size() if self.children else 1

    def get_repeat_count(self) -> int:
        return self.children[0].get_repeat_count() if self.children else 1

    # operations ------------------------------------------------------------------------
    def map(
        self,
        operations: Any,
        input_columns: Any = None,
        output_columns: Any = None,
        num_parallel_workers: int | None = None,
        **kwargs: Any,
    ) -> Dataset:
        """Apply ``operations`` in order to ``input_columns`` (default: the first column)."""
        from ._ops import MapDataset

        _no_extra("map", kwargs)
        return MapDataset(self, operations, input_columns, output_columns)

    def batch(
        self,
        batch_size: int,
        drop_remainder: bool = False,
        num_parallel_workers: int | None = None,
        **kwargs: Any,
    ) -> Dataset:
        from ._ops import BatchDataset

        _no_extra("batch", kwargs)
        return BatchDataset(self, _check_count(batch_size, "batch_size", 1), drop_remainder)

    def shuffle(self, buffer_size: int) -> Dataset:
        from ._ops import ShuffleDataset

        return ShuffleDataset(self, _check_count(buffer_size, "buffer_size", 2))

    def repeat(self, count: int | None = None) -> Dataset:
        from ._ops import RepeatDataset

        if count is not None and count != -1:
            _check_count(count, "count", 1)
        return RepeatDataset(self, None if count in (None, -1) else count)

    def project(self, columns: Any) -> Dataset:
        from ._ops import ProjectDataset

        return ProjectDataset(self, _names(columns, "columns"))

    def rename(self, input_columns: Any, output_columns: Any) -> Dataset:
        from ._ops import RenameDataset

        return RenameDataset(
            self, _names(input_columns, "input_columns"), _names(output_columns, "output_columns")
        )

    def skip(self, count: int) -> Dataset:
        from ._ops import SliceDataset

        return SliceDataset(self, _check_count(count, "count", 0), None)

    def take(self, count: int = -1) -> Dataset:
        from ._ops import SliceDataset

        return SliceDataset(self, 0, None if count == -1 else _check_count(count, "count", 1))

    # iteration -------------------------------------------------------------------------
    def create_tuple_iterator(
        self, columns: Any = None, num_epochs: int = -1, output_numpy: bool = False, do_copy: bool = False
    ) -> Iterator:
        """Rows as lists (Tensors, or numpy arrays with ``output_numpy``); ``num_epochs`` passes."""
        from ._iterators import RowIterator

        picked = None if columns is None else _names(columns, "columns")
        return RowIterator(self, picked, num_epochs, output_numpy, as_dict=False)

    def create_dict_iterator(
        self, num_epochs: int = -1, output_numpy: bool = False, do_copy: bool = False
    ) -> Iterator:
        from ._iterators import RowIterator

        return RowIterator(self, None, num_epochs, output_numpy, as_dict=True)

    def __iter__(self) -> Iterator:
        return iter(self.create_tuple_iterator())

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise missing("mindspore.dataset.Dataset", name)


def shuffled(count: int) -> np.ndarray:
    """A permutation of ``range(count)`` from the pipeline's generator."""
    return generator().permutation(count)
