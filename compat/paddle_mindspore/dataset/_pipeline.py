"""``mindspore.dataset.Dataset``: what a user holds; each operation wraps a new node (``_ops.py``)
around the dataset's node (``_node.py``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from .._validate import missing, not_provided
from ._iterators import RowIterator
from ._node import Node, check_count, names
from ._ops import (
    BatchDataset,
    MapDataset,
    ProjectDataset,
    RenameDataset,
    RepeatDataset,
    ShuffleDataset,
    SliceDataset,
)

__all__ = ["Dataset"]

_ACCEPTED = ("num_parallel_workers", "python_multiprocessing", "max_rowsize", "cache")


def _no_extra(api: str, kwargs: dict, accepted: Sequence[str] = _ACCEPTED) -> None:
    for key, value in kwargs.items():
        if key not in accepted and value is not None:
            raise not_provided(f"mindspore.dataset.Dataset.{api}({key}=...)")


class Dataset:
    """The operations every MindSpore dataset has (``map``, ``batch``, ``shuffle``, ...)."""

    def __init__(self, node: Node):
        self._node = node

    # information -----------------------------------------------------------------------
    def get_col_names(self) -> list[str]:
        return list(self._node.columns)

    def get_dataset_size(self) -> int:
        """Rows (batches after ``batch``) in one epoch."""
        return self._node._size()

    def output_shapes(self, estimate: bool = False) -> list[list[int]]:
        """The shape of each column in the first row (batch included), as MindSpore reports it."""
        return [list(value.shape) for value in self._first_row()]

    def output_types(self) -> list:
        """The numpy dtype of each column in the first row."""
        return [value.dtype for value in self._first_row()]

    def _first_row(self) -> tuple:
        for row in self._node._epoch():
            return row
        raise RuntimeError("The dataset is empty: it has no row to take shapes or types from.")

    def get_batch_size(self) -> int:
        return self._node.batch_size()

    def get_repeat_count(self) -> int:
        return self._node.repeat_count()

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
        _no_extra("map", kwargs)
        return Dataset(MapDataset(self._node, operations, input_columns, output_columns))

    def batch(
        self,
        batch_size: int,
        drop_remainder: bool = False,
        num_parallel_workers: int | None = None,
        **kwargs: Any,
    ) -> Dataset:
        _no_extra("batch", kwargs)
        return Dataset(BatchDataset(self._node, check_count(batch_size, "batch_size", 1), drop_remainder))

    def shuffle(self, buffer_size: int) -> Dataset:
        return Dataset(ShuffleDataset(self._node, check_count(buffer_size, "buffer_size", 2)))

    def repeat(self, count: int | None = None) -> Dataset:
        if count is not None and count != -1:
            check_count(count, "count", 1)
        return Dataset(RepeatDataset(self._node, None if count in (None, -1) else count))

    def project(self, columns: Any) -> Dataset:
        return Dataset(ProjectDataset(self._node, names(columns, "columns")))

    def rename(self, input_columns: Any, output_columns: Any) -> Dataset:
        old, new = names(input_columns, "input_columns"), names(output_columns, "output_columns")
        return Dataset(RenameDataset(self._node, old, new))

    def skip(self, count: int) -> Dataset:
        return Dataset(SliceDataset(self._node, check_count(count, "count", 0), None))

    def take(self, count: int = -1) -> Dataset:
        return Dataset(SliceDataset(self._node, 0, None if count == -1 else check_count(count, "count", 1)))

    # iteration -------------------------------------------------------------------------
    def create_tuple_iterator(
        self, columns: Any = None, num_epochs: int = -1, output_numpy: bool = False, do_copy: bool = False
    ) -> Iterator:
        """Rows as lists (Tensors, or numpy arrays with ``output_numpy``); ``num_epochs`` passes."""
        picked = None if columns is None else names(columns, "columns")
        return RowIterator(self._node, picked, num_epochs, output_numpy, as_dict=False)

    def create_dict_iterator(
        self, num_epochs: int = -1, output_numpy: bool = False, do_copy: bool = False
    ) -> Iterator:
        return RowIterator(self._node, None, num_epochs, output_numpy, as_dict=True)

    def __iter__(self) -> Iterator:
        return iter(self.create_tuple_iterator())

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_node":
            raise AttributeError(name)
        raise missing("mindspore.dataset.Dataset", name)
