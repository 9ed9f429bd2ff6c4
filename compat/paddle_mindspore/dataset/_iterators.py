"""``create_tuple_iterator`` / ``create_dict_iterator``: epochs of rows, as Tensors or numpy arrays."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ._columns import to_output

__all__ = ["RowIterator"]


class RowIterator:
    """Each ``for`` loop over the iterator is one epoch; after ``num_epochs`` of them (``-1``:
    no limit) asking for more raises ``RuntimeError``, as MindSpore's iterator does."""

    def __init__(
        self, dataset: Any, columns: list[str] | None, num_epochs: int, output_numpy: bool, as_dict: bool
    ):
        if (
            isinstance(num_epochs, bool)
            or not isinstance(num_epochs, int)
            or not (num_epochs == -1 or num_epochs >= 1)
        ):
            raise RuntimeError(
                f"Input num_epochs is not within the required interval of [-1, 2147483647], "
                f"but got {num_epochs!r}."
            )
        if not isinstance(output_numpy, bool):
            raise TypeError(
                f"Argument output_numpy with value {output_numpy!r} is not of type [<class 'bool'>]."
            )
        names = dataset.columns
        if columns is not None:
            unknown = [c for c in columns if c not in names]
            if unknown:
                raise ValueError(
                    f"Invalid column name: {unknown[0]} does not exist in the dataset columns {names}."
                )
        self._dataset, self._names = dataset, names
        self._pick = [names.index(c) for c in columns] if columns is not None else list(range(len(names)))
        self._epochs_left = num_epochs
        self._numpy, self._dict = output_numpy, as_dict
        self._rows: Iterator | None = None

    def __iter__(self) -> RowIterator:
        return self

    def __next__(self) -> Any:
        if self._rows is None:
            if self._epochs_left == 0:
                raise RuntimeError(
                    "EOF buffer encountered. User tries to fetch data beyond the specified number "
                    "of epochs (create_tuple_iterator / create_dict_iterator num_epochs)."
                )
            self._rows = self._dataset._epoch()
        try:
            row = next(self._rows)
        except StopIteration:
            self._rows = None
            self._epochs_left -= 1 if self._epochs_left > 0 else 0
            raise
        if self._dict:
            return {self._names[i]: to_output(row[i], self._numpy) for i in self._pick}
        return [to_output(row[i], self._numpy) for i in self._pick]

    def get_next(self) -> Any:
        return next(self)
