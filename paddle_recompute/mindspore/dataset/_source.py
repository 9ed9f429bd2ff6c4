"""The base of source datasets: rows by index, MindSpore's sampling (``shuffle``, ``num_samples``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .._validate import not_provided
from ._node import Node, check_count, shuffled

__all__ = ["MappableSource", "check_source_args"]


def check_source_args(api: str, num_samples: Any, shuffle: Any, **unsupported: Any) -> None:
    """Validate the sampling arguments; raise for the ones this layer does not provide."""
    if num_samples is not None:
        check_count(num_samples, "num_samples", 0)
    if shuffle is not None and not isinstance(shuffle, bool):
        raise TypeError(
            f"Argument shuffle with value {shuffle!r} is not of type [<class 'bool'>], "
            f"but got {type(shuffle)}."
        )
    for key, value in unsupported.items():
        if value is not None:
            raise not_provided(
                f"mindspore.dataset.{api}({key}=...)", "samplers and sharding are not provided"
            )


class MappableSource(Node):
    """A source read by index. ``shuffle=None`` shuffles, as MindSpore's sources do."""

    def __init__(self, columns: list[str], num_samples: int | None, shuffle: bool | None):
        super().__init__((), columns)
        self._limit = num_samples or None  # MindSpore: 0 means all
        self._shuffle = True if shuffle is None else shuffle

    def _count(self) -> int:
        raise NotImplementedError

    def _row(self, index: int) -> tuple:
        raise NotImplementedError

    def _size(self) -> int:
        n = self._count()
        return n if self._limit is None else min(n, self._limit)

    def _epoch(self) -> Iterator[tuple]:
        order = shuffled(self._count()) if self._shuffle else range(self._count())
        for position, index in enumerate(order):
            if position >= self._size():
                return
            yield self._row(int(index))
