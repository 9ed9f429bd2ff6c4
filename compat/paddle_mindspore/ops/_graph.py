"""MindSpore's graph-building helpers, run eagerly: ``MultitypeFuncGraph``, ``HyperMap``, ``Map``,
``partial``, ``depend``, ``constexpr``, ``assign``, ``assign_add`` (and ``AssignAdd``), ``shape``,
``rank``, ``dtype``, ``tuple_to_array``, ``clip_by_global_norm``.

In graph mode MindSpore compiles these into the graph; here they are the Python functions
they describe: ``depend(value, expr)`` returns ``value`` (``expr`` was already evaluated),
``constexpr`` functions are called directly.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import paddle

from .._primitive import Primitive
from .._validate import not_provided
from ..common.sparse_tensor import RowTensor

__all__ = [
    "MultitypeFuncGraph",
    "HyperMap",
    "Map",
    "partial",
    "depend",
    "constexpr",
    "assign",
    "assign_add",
    "AssignAdd",
    "shape",
    "rank",
    "dtype",
    "tuple_to_array",
    "clip_by_global_norm",
]

_TYPES: dict[str, Callable[[Any], bool]] = {
    "Tensor": lambda v: isinstance(v, paddle.Tensor),
    "Number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "Int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "Int64": lambda v: isinstance(v, int) and not isinstance(v, bool),  # a Python int, as MindSpore types it
    "Float": lambda v: isinstance(v, float),
    "Bool": lambda v: isinstance(v, bool),
    "String": lambda v: isinstance(v, str),
    "Tuple": lambda v: isinstance(v, tuple),
    "List": lambda v: isinstance(v, list),
    "Function": lambda v: callable(v) and not isinstance(v, paddle.Tensor),
    "Primitive": lambda v: isinstance(v, Primitive),
    "None": lambda v: v is None,
    "RowTensor": lambda v: isinstance(v, RowTensor),
    # sparse tensor kinds the layer does not provide: registrations are accepted, never matched
    "COOTensor": lambda v: False,
    "CSRTensor": lambda v: False,
    "MapTensor": lambda v: False,
}


class MultitypeFuncGraph:
    """``MultitypeFuncGraph(name)``: functions registered per argument-type signature; a call
    runs the first whose type names (``"Tensor"``, ``"Number"``, ``"Function"``, ...) match."""

    def __init__(self, name: str, read_value: bool = False):
        self.name = name
        self.entries: list[tuple[tuple[str, ...], Callable]] = []

    def register(self, *type_names: Any) -> Callable[[Callable], Callable]:
        names = tuple(t if isinstance(t, str) else getattr(t, "__name__", str(t)) for t in type_names)
        unknown = [n for n in names if n not in _TYPES]
        if unknown:
            raise TypeError(
                f"MultitypeFuncGraph {self.name!r}: unknown type name {unknown[0]!r}; known: {sorted(_TYPES)}"
            )

        def deco(fn: Callable) -> Callable:
            self.entries.append((names, fn))
            return fn

        return deco

    def __call__(self, *args: Any) -> Any:
        for names, fn in self.entries:
            if len(names) == len(args) and all(_TYPES[n](a) for n, a in zip(names, args, strict=True)):
                return fn(*args)
        kinds = ", ".join(type(a).__name__ for a in args)
        raise TypeError(f"The 'MultitypeFuncGraph' {self.name!r} has no function registered for ({kinds}).")


def _map(fn: Callable, seqs: Sequence[Any], deep: bool) -> Any:
    if all(isinstance(s, tuple | list) for s in seqs) and seqs:
        lengths = {len(s) for s in seqs}
        if len(lengths) != 1:
            raise ValueError(f"HyperMap: the sequences have different lengths {sorted(lengths)}")
        return tuple(_map(fn, items, deep) if deep else fn(*items) for items in zip(*seqs, strict=True))
    return fn(*seqs)


class HyperMap:
    """``HyperMap(ops=None, reverse=False)``: apply ``ops`` (or the first argument) across the
    items of the tuple arguments, recursively; a tuple of results."""

    def __init__(self, ops: Callable | None = None, reverse: bool = False):
        self.ops = ops

    def __call__(self, *args: Any) -> Any:
        fn, seqs = (self.ops, args) if self.ops is not None else (args[0], args[1:])
        return _map(fn, seqs, deep=True)


class Map(HyperMap):
    """``Map(ops=None, reverse=False)``: like ``HyperMap`` over one level of sequences."""

    def __call__(self, *args: Any) -> Any:
        fn, seqs = (self.ops, args) if self.ops is not None else (args[0], args[1:])
        return _map(fn, seqs, deep=False)


def partial(func: Callable, *args: Any) -> functools.partial:
    return functools.partial(func, *args)


def depend(value: Any, expr: Any) -> Any:
    """``value``: in eager execution ``expr`` has already run."""
    return value


def constexpr(
    fn: Callable | None = None, get_instance: bool = True, reuse_result: bool = True, check: bool = True
) -> Any:
    """Decorator for compile-time constant functions: they are called directly."""
    if fn is None:
        return lambda f: f
    return fn


def assign(variable: paddle.Tensor, value: Any) -> paddle.Tensor:
    """Write ``value`` into ``variable`` in place; returns ``variable``."""
    with paddle.no_grad():
        paddle.assign(
            value if isinstance(value, paddle.Tensor) else paddle.to_tensor(value, dtype=variable.dtype),
            output=variable,
        )
    return variable


def assign_add(variable: paddle.Tensor, value: Any) -> paddle.Tensor:
    """Add ``value`` to ``variable`` in place (in its dtype); returns ``variable``."""
    addend = value if isinstance(value, paddle.Tensor) else paddle.to_tensor(value, dtype=variable.dtype)
    return assign(variable, variable + addend.astype(variable.dtype))


class AssignAdd(Primitive):
    """``AssignAdd()(variable, value)``: ``assign_add`` as an operator class."""

    def compute(self, variable: paddle.Tensor, value: Any) -> paddle.Tensor:
        return assign_add(variable, value)


def shape(input_x: paddle.Tensor) -> tuple[int, ...]:
    return tuple(input_x.shape)


def rank(input_x: paddle.Tensor) -> int:
    return input_x.ndim


def dtype(input_x: paddle.Tensor) -> Any:
    return input_x.dtype


def tuple_to_array(input_x: Sequence[Any]) -> paddle.Tensor:
    """int32 for ints, float32 for floats (MindSpore's inference)."""
    values = list(input_x)
    kind = "float32" if any(isinstance(v, float) for v in values) else "int32"
    return paddle.to_tensor(values, dtype=kind)


def clip_by_global_norm(
    x: Sequence[paddle.Tensor], clip_norm: float = 1.0, use_norm: Any = None
) -> tuple[paddle.Tensor, ...]:
    """Scale every tensor by ``clip_norm / max(global_norm, clip_norm)``."""
    if use_norm is not None:
        raise not_provided("ops.clip_by_global_norm(use_norm=...)")
    tensors = list(x)
    total = paddle.sqrt(paddle.add_n([paddle.sum(paddle.square(t.astype("float32"))) for t in tensors]))
    scale = clip_norm / paddle.maximum(total, paddle.full([], clip_norm, dtype="float32"))
    return tuple((t * scale.astype(t.dtype)) for t in tensors)
