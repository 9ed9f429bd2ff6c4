"""Pipeline nodes: each pulls rows from its child; the checks MindSpore applies to their arguments.

A row is a tuple of numpy arrays, one per column. Every node knows its column names and its
size; ``_epoch()`` yields one epoch of rows. Nodes run in the calling thread, one row at a
time (MindSpore runs them in worker threads; the rows are the same without shuffling).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

__all__ = ["Node", "names", "check_count", "INT32_MAX"]

INT32_MAX = 2147483647


def names(value: Any, what: str) -> list[str]:
    """A column name or a list of them (MindSpore's ``TypeError`` otherwise)."""
    items = [value] if isinstance(value, str) else list(value) if isinstance(value, list | tuple) else None
    if not items or not all(isinstance(n, str) and n for n in items):
        raise TypeError(
            f"Argument {what} with value {value!r} is not of type [<class 'str'>, <class 'list'>]."
        )
    return items


def check_count(value: Any, what: str, low: int) -> int:
    """An int in ``[low, INT32_MAX]`` (MindSpore's ``TypeError`` / ``ValueError`` texts)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(
            f"Argument {what} with value {value!r} is not of type [<class 'int'>], but got {type(value)}."
        )
    if not low <= value <= INT32_MAX:
        raise ValueError(f"Input {what} is not within the required interval of [{low}, {INT32_MAX}].")
    return value


class Node:
    def __init__(self, children: Sequence[Node] = (), columns: Sequence[str] = ()):
        self.children = list(children)
        self.columns = list(columns)

    def _epoch(self) -> Iterator[tuple]:
        raise NotImplementedError

    def _size(self) -> int:
        return self.children[0]._size()

    def batch_size(self) -> int:
        return self.children[0].batch_size() if self.children else 1

    def repeat_count(self) -> int:
        return self.children[0].repeat_count() if self.children else 1
