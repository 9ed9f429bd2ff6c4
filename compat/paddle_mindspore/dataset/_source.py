"""The base of source datasets: rows by index, in the order of a sampler (``samplers.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .._validate import not_provided
from ._node import Node, check_count
from .samplers import Sampler, select_sampler

__all__ = ["MappableSource", "source_sampler"]


def source_sampler(api: str, num_samples: Any, shuffle: Any, sampler: Any = None, num_shards: Any = None,
                   shard_id: Any = None, **unsupported: Any) -> Sampler:
    """Validate a source's sampling arguments and return the sampler they mean; raise for the
    arguments this layer does not provide."""
    if num_samples is not None:
        check_count(num_samples, "num_samples", 0)
    if shuffle is not None and not isinstance(shuffle, bool):
        raise TypeError(
            f"Argument shuffle with value {shuffle!r} is not of type [<class 'bool'>], "
            f"but got {type(shuffle)}."
        )
    for key, value in unsupported.items():
        if value is not None:
            raise not_provided(f"mindspore.dataset.{api}({key}=...)")
    return select_sampler(num_samples, sampler, shuffle, num_shards, shard_id)


class MappableSource(Node):
    """A source read by index, in its sampler's order (random without ``shuffle=False``, as
    MindSpore's sources are)."""

    def __init__(self, columns: list[str], sampler: Sampler):
        super().__init__((), columns)
        self._sampler = sampler

    def _count(self) -> int:
        raise NotImplementedError

    def _row(self, index: int) -> tuple:
        raise NotImplementedError

    def _size(self) -> int:
        return self._sampler.size(self._count())

    def _epoch(self) -> Iterator[tuple]:
        for index in self._sampler.indices(self._count()):
            yield self._row(int(index))
