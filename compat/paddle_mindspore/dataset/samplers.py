"""``mindspore.dataset`` samplers: which rows of a random-access source an epoch reads, in order.

``SequentialSampler``, ``DistributedSampler`` with ``shuffle=False``, ``SubsetSampler`` and a
list of indices give MindSpore 2.10's rows exactly (recorded). The random ones
(``RandomSampler``, ``SubsetRandomSampler``, ``DistributedSampler(shuffle=True)``) draw from the
pipeline's numpy generator (``dataset.config.set_seed``), not MindSpore's C++ one, so seeded
orders differ from MindSpore's; their sizes and what they draw from are MindSpore's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._node import INT32_MAX, check_count
from .config import generator

__all__ = [
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "DistributedSampler",
    "SubsetSampler",
    "SubsetRandomSampler",
    "IterSampler",
    "select_sampler",
]


def _flag(value: Any, what: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{what} must be a boolean value but was: {value}.")
    return value


def _samples(value: Any) -> int | None:
    return None if value is None else check_count(value, "num_samples", 0) or None


class Sampler:
    """The base: ``indices(count)`` is one epoch's row indices for a source of ``count`` rows."""

    num_samples: int | None = None

    def indices(self, count: int) -> list[int]:
        raise NotImplementedError

    def size(self, count: int) -> int:
        """Rows per epoch (``get_dataset_size``): MindSpore caps ``num_samples`` at what it reads."""
        natural = self._natural(count)
        return natural if self.num_samples is None else min(natural, self.num_samples)

    def _natural(self, count: int) -> int:
        return count

    def get_num_samples(self) -> int | None:
        return self.num_samples


class SequentialSampler(Sampler):
    """``SequentialSampler(start_index=None, num_samples=None)``: rows from ``start_index`` on."""

    def __init__(self, start_index: int | None = None, num_samples: int | None = None):
        self.start_index = 0 if start_index is None else check_count(start_index, "start_index", 0)
        self.num_samples = _samples(num_samples)

    def _natural(self, count: int) -> int:
        return max(count - self.start_index, 0)

    def indices(self, count: int) -> list[int]:
        return list(range(self.start_index, self.start_index + self.size(count)))


class RandomSampler(Sampler):
    """``RandomSampler(replacement=False, num_samples=None)``: a permutation (or draws with
    replacement), at most the source's row count per epoch, as in MindSpore."""

    def __init__(self, replacement: bool = False, num_samples: int | None = None):
        self.replacement = _flag(replacement, "replacement")
        self.num_samples = _samples(num_samples)

    def indices(self, count: int) -> list[int]:
        if self.replacement:
            return generator().integers(0, count, self.size(count)).tolist()
        return generator().permutation(count)[: self.size(count)].tolist()


class SubsetSampler(Sampler):
    """``SubsetSampler(indices, num_samples=None)``: the given rows, in the given order."""

    def __init__(self, indices: Sequence[int], num_samples: int | None = None):
        items = list(indices) if isinstance(indices, Sequence | np.ndarray) else None
        integral = items is not None and all(
            isinstance(i, int | np.integer) and not isinstance(i, bool) for i in items)
        if not integral:
            raise TypeError(f"Type of indices element must be int, but got list[0]: {indices!r}.")
        self._items = [int(i) for i in items]
        self.num_samples = _samples(num_samples)

    def _natural(self, count: int) -> int:
        return len(self._items)

    def _chosen(self) -> list[int]:
        return self._items

    def indices(self, count: int) -> list[int]:
        chosen = self._chosen()[: self.size(count)]
        bad = [i for i in chosen if not -count <= i < count]
        if bad:
            raise RuntimeError(f"Sample ID ({bad[0]}) is out of bound, expected range [0, {count - 1}]")
        return [i % count for i in chosen]


class SubsetRandomSampler(SubsetSampler):
    """``SubsetRandomSampler(indices, num_samples=None)``: the given rows in a random order."""

    def _chosen(self) -> list[int]:
        return [self._items[i] for i in generator().permutation(len(self._items))]


class DistributedSampler(Sampler):
    """``DistributedSampler(num_shards, shard_id, shuffle=True, num_samples=None, offset=-1)``.

    Shard ``shard_id`` of ``num_shards`` reads rows ``shard_id, shard_id + num_shards, ...``,
    ``ceil(rows / num_shards)`` of them, wrapping around to the first rows so that every shard
    reads as many (MindSpore's padding); with ``offset`` the shards start ``offset`` places
    later and read ``(rows + offset) / num_shards`` rows, as MindSpore 2.10 does (recorded).
    ``shuffle=True`` permutes the source's rows first (one permutation per epoch).
    """

    def __init__(self, num_shards: int, shard_id: int, shuffle: bool = True, num_samples: int | None = None,
                 offset: int = -1):
        self.num_shards = check_count(num_shards, "num_shards", 1)
        self.shard_id = check_count(shard_id, "shard_id", 0)
        self.shuffle = _flag(shuffle, "shuffle")
        self.num_samples = _samples(num_samples)
        if isinstance(offset, bool) or not isinstance(offset, int) or not -1 <= offset <= INT32_MAX:
            raise ValueError(f"offset should be no less than -1, but got {offset!r}.")
        self.offset = offset

    def _check(self) -> None:
        if self.shard_id >= self.num_shards:  # MindSpore: raised by the pipeline when it runs (recorded)
            raise RuntimeError(f"DistributedSampler: shard_id ({self.shard_id}) should be less than "
                               f"num_shards ({self.num_shards}).")

    def _natural(self, count: int) -> int:
        self._check()
        if self.offset == -1:
            return -(-count // self.num_shards)
        rows, extra = divmod(count + self.offset, self.num_shards)
        return rows + (self.shard_id < extra) - (self.shard_id < self.offset)

    def indices(self, count: int) -> list[int]:
        order = generator().permutation(count) if self.shuffle else np.arange(count)
        start = self.shard_id - max(self.offset, 0)
        wanted, picked, step = self.size(count), [], 0
        while len(picked) < wanted:
            position = self.num_shards * step + start
            step += 1
            if position >= 0:
                picked.append(int(order[position % count]))
        return picked


class IterSampler(Sampler):
    """A user sampler: any object with ``__iter__`` (mindcv's ``RepeatAugSampler``); each epoch
    reads the indices it yields (``num_samples`` of them at most), as MindSpore's
    ``IterSampler`` does."""

    def __init__(self, sampler: Any, num_samples: int | None = None):
        self.sampler = sampler
        self.num_samples = _samples(num_samples)

    def _natural(self, count: int) -> int:
        return len(self.sampler) if hasattr(self.sampler, "__len__") else len(self._drawn())

    def _drawn(self) -> list[int]:
        return [int(i) for i in iter(self.sampler)]

    def indices(self, count: int) -> list[int]:
        drawn = self._drawn()
        return drawn if self.num_samples is None else drawn[: self.num_samples]


def _conflict(num_samples: Any, num_shards: Any, shard_id: Any, shuffle: Any) -> ValueError:
    return ValueError(
        f"Conflicting arguments during sampler assignments. num_samples: {num_samples}, "
        f"num_shards: {num_shards}, shard_id: {shard_id}, shuffle: {shuffle}."
    )


def select_sampler(num_samples: Any, sampler: Any, shuffle: Any, num_shards: Any, shard_id: Any) -> Sampler:
    """The sampler a source's arguments mean (MindSpore's ``select_sampler``): a given sampler
    (or list of indices) with no other sampling argument, else a shard, else random rows unless
    ``shuffle=False``."""
    if (num_shards is None) != (shard_id is None):
        raise ValueError("num_shards and shard_id need to be passed in together.")
    if num_shards is not None:
        check_count(num_shards, "num_shards", 1)
        if check_count(shard_id, "shard_id", 0) >= num_shards:
            raise ValueError("shard_id should be less than num_shards.")
    if sampler is not None:
        if any(v is not None for v in (num_samples, num_shards, shard_id, shuffle)):
            raise _conflict(num_samples, num_shards, shard_id, shuffle)
        if isinstance(sampler, list | tuple | np.ndarray):
            return SubsetSampler(sampler)
        if isinstance(sampler, Sampler):
            return sampler
        if not hasattr(sampler, "__iter__"):
            raise TypeError(f"Unsupported sampler object of type ({type(sampler)})")
        return IterSampler(sampler)
    if num_shards is not None:
        return DistributedSampler(num_shards, shard_id, shuffle is not False, num_samples)
    if shuffle is False:
        return SequentialSampler(num_samples=num_samples)
    return RandomSampler(num_samples=num_samples)
