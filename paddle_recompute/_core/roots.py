"""Find the Layers a recomputed callable runs: NOTE [ Reaching layers ].

NOTE [ Reaching layers ]: a region's layers are watched at the forward and put back for
the rerun (NOTE [ Forward writes ] in ``written.py``), so a layer the search misses has its
state (BatchNorm statistics, spectral norm's vectors, counters) written twice.  The search
starts from the callable and its arguments and does not run anything; it finds a layer that is

- the callable itself, an argument or keyword argument, or ``__self__`` of a bound method;
- in a list, tuple or dict (values) of at most ``_ITEMS`` entries the search meets;
- a ``functools.partial``'s function, argument or keyword, a ``_recompute_roots`` entry
  (``recompute_sequential``'s chains, the planner's runs of calls);
- a function's closure cell, default argument, or module global that its code reads
  (``LOAD_GLOBAL``, nested lambdas, comprehensions and inner functions included);
- an instance attribute (``vars(obj)``) of a non-Layer object met on the way: a bound
  method's ``__self__``, a closure cell, a partial argument, a global, the callable itself.

Functions, bound methods and partials met on the way (a global helper function, an
attribute holding a function) are searched the same way, up to ``_DEPTH`` hops from the
callable and ``_VISITS`` objects in all; each object once, so recursion between functions
ends.  Not searched: modules (``mymodule.model``), classes, tensors, a Layer's own methods
(its layers are its sublayers, walked later), Paddle's own functions (``F.linear``: no user
layer, and globals enough to cost tens of microseconds a call), attributes of attributes
(``self.a.b.net``), and containers inside containers.  A layer reached only that way is missed: pass it as an
argument or in a ``functools.partial``.

Cost: this runs on every recompute call.  A Layer callable returns at once; for a function
the global names its code reads are found once per code object (``_global_names``, kept by
code object identity) and looked up in its globals on each call, since a global can be
reassigned between calls.
"""

from __future__ import annotations

import dis
import functools
import types

import paddle
from paddle import nn

__all__ = ["find_roots"]

_DEPTH = 4  # hops from the callable: fn -> helper -> helper -> helper -> helper
_ITEMS = 256  # the most entries of a container (or attributes of an object) looked at
_VISITS = 64  # the most functions and objects looked into per search (the worst case)
_CACHE = 4096  # code objects whose global names are kept; cleared when full

# never looked into: what they hold is not the region's (or, for a Layer, walked as sublayers)
_OPAQUE = (types.ModuleType, type, types.BuiltinFunctionType, paddle.Tensor, nn.Layer,
           str, bytes, int, float, complex, bool, types.CodeType)
_GLOBAL_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})
_NAMES: dict[int, tuple] = {}  # id(code) -> (code, the global names it and its nested code read)


def find_roots(function, args: tuple, kwargs: dict) -> tuple:
    """Layers reachable from the callable and its arguments (NOTE [ Reaching layers ]),
    each once, without walking sublayers."""
    if isinstance(function, nn.Layer):  # the common call: nothing to search
        roots = [function]
    else:
        search = _Search()
        search.value(function, 0)
        roots = search.roots
    for value in args:
        if isinstance(value, nn.Layer) and not any(value is r for r in roots):
            roots.append(value)
    for value in kwargs.values():
        if isinstance(value, nn.Layer) and not any(value is r for r in roots):
            roots.append(value)
    return tuple(roots)


class _Search:
    """One search: the layers found, and the ids of everything met (layers included)."""

    __slots__ = ("roots", "seen", "visits")

    def __init__(self):
        self.roots: list = []
        self.seen: set[int] = set()
        self.visits = 0

    def add(self, layer: nn.Layer) -> None:
        if id(layer) not in self.seen:
            self.seen.add(id(layer))
            self.roots.append(layer)

    def value(self, obj, depth: int) -> None:
        """A value met at ``depth`` hops: a layer, a container of layers, or something to
        look into."""
        if isinstance(obj, nn.Layer):
            self.add(obj)
        elif isinstance(obj, (list, tuple)):
            self.entries(obj)
        elif isinstance(obj, dict):
            self.entries(obj.values())
        elif (depth < _DEPTH and self.visits < _VISITS and id(obj) not in self.seen
              and not isinstance(obj, _OPAQUE)):
            self.seen.add(id(obj))
            self.visits += 1
            self.into(obj, depth + 1)

    def entries(self, items) -> None:
        if len(items) <= _ITEMS:
            for item in items:
                if isinstance(item, nn.Layer):
                    self.add(item)

    def into(self, obj, depth: int) -> None:
        if isinstance(obj, functools.partial):
            self.value(obj.func, depth)
            for item in obj.args:
                self.value(item, depth)
            for item in obj.keywords.values():
                self.value(item, depth)
            return
        chained = _chained(obj)
        if chained is not None:
            for item in chained:
                self.value(item, depth)
        elif isinstance(obj, types.FunctionType):
            self.function(obj, depth)
        elif isinstance(obj, types.MethodType):
            owner = obj.__self__
            self.value(owner, depth)
            if not isinstance(owner, nn.Layer):  # a Layer's method runs its sublayers
                self.value(obj.__func__, depth)
        else:
            self.attributes(obj, depth)

    def function(self, fn: types.FunctionType, depth: int) -> None:
        if _is_paddles(fn.__module__):  # F.linear: no user layers, many globals
            return
        for cell in fn.__closure__ or ():
            try:
                self.value(cell.cell_contents, depth)
            except ValueError:  # an empty cell
                pass
        for item in fn.__defaults__ or ():
            self.value(item, depth)
        for item in (fn.__kwdefaults__ or {}).values():
            self.value(item, depth)
        found = fn.__globals__
        for name in _global_names(fn.__code__):
            item = found.get(name)  # builtins are not in the module's globals
            if item is not None:
                self.value(item, depth)

    def attributes(self, obj, depth: int) -> None:
        """A plain object's attributes: layers, containers of layers, and callables (a
        holder's function); the objects they hold are not looked into."""
        found = getattr(obj, "__dict__", None)
        if isinstance(found, dict) and len(found) <= _ITEMS:
            for item in found.values():
                if isinstance(item, (nn.Layer, list, tuple, dict, types.FunctionType,
                                     types.MethodType, functools.partial)):
                    self.value(item, depth)
        call = type(obj).__call__ if callable(obj) else None
        if isinstance(call, types.FunctionType):  # a callable object: its __call__'s globals
            self.value(call, depth)


def _is_paddles(module) -> bool:
    return isinstance(module, str) and (module == "paddle" or module.startswith("paddle."))


def _chained(obj):
    """``obj._recompute_roots`` (a chain's callables), or None."""
    if isinstance(obj, types.FunctionType):  # read its attributes, no AttributeError raised
        return obj.__dict__.get("_recompute_roots") if obj.__dict__ else None
    try:
        return getattr(obj, "_recompute_roots", None)
    except Exception:  # an object whose __getattr__ fails on unknown names
        return None


def _global_names(code: types.CodeType) -> tuple:
    """The global names ``code`` and the code nested in it read, once per code object."""
    entry = _NAMES.get(id(code))
    if entry is not None and entry[0] is code:
        return entry[1]
    names = tuple(dict.fromkeys(_reads(code)))
    if len(_NAMES) >= _CACHE:
        _NAMES.clear()
    _NAMES[id(code)] = (code, names)  # the code is kept, so its id is not reused
    return names


def _reads(code: types.CodeType):
    for instruction in dis.get_instructions(code):
        if instruction.opname in _GLOBAL_LOADS:
            yield instruction.argval
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _reads(const)
