"""Calls of MindSpore's ``Cell`` and ``Primitive`` methods in a source tree, found statically.

A call ``x.m(...)`` is one when ``m`` is a public method of MindSpore's ``nn.Cell`` or
``ops.Primitive`` (recorded from MindSpore 2.10:
compat/tests/recorded/ms_cell_primitive_methods.json).
Which of the two ``x`` is comes from where ``x`` comes from:

- a class called: ``P.MatMul().shard(...)`` (``mindspore.ops.<Class>``: a Primitive),
  ``nn.Dense(...).to_float(...)`` (``mindspore.nn.<Class>``: a Cell), a class of the scanned
  tree (what its bases make it, followed across files by class name; ``ClassIndex``);
- ``self.m(...)`` and ``super().m(...)``: the enclosing class;
- ``self.attr.m(...)``, ``name.m(...)``, ``self.cells[i].m(...)``: what ``self.attr = ...`` in
  the class, ``name = ...`` in the function assigned (a subscript of a Cell is a Cell);
- anything else is unknown: the call counts, as unsure, for each of ``Cell`` and ``Primitive``
  that has ``m``, except when ``m`` is also a Tensor member or a name other objects commonly have
  (``GENERIC``: ``optimizer.state_dict()``, ``pool.apply(...)``), which count only when the
  receiver is known, or the receiver comes from another library (``np.ones(3).shard()``).
  A receiver known to be neither (a Tensor, another class) does not count, nor a call of a
  method the receiver's class in the tree defines itself (mindformers' cells define their own
  ``shard(parallel_config)``).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator

OTHER = "other"  # known to be neither a Cell nor a Primitive
GENERIC = frozenset({"apply", "compile", "construct", "state_dict", "load_state_dict", "buffers",
                     "named_buffers", "place", "set_device", "to", "to_empty", "get_buffer"})
_NOT_PRIMITIVES = frozenset({"GradOperation", "MultitypeFuncGraph", "HyperMap", "Map", "Partial"})


def chain(node: ast.AST) -> list[str] | None:
    """``a.b.c`` -> ``["a", "b", "c"]``; None when it does not start from a name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    return None


def ms_kind(dotted: str) -> str:
    """What an instance of the MindSpore name ``dotted`` is."""
    last = dotted.rsplit(".", 1)[-1]
    if not last[:1].isupper():
        return OTHER
    if "Primitive" in last:
        return "Primitive"
    if dotted.startswith("mindspore.nn.") and ".metrics." not in dotted:
        return "Cell"
    if dotted.startswith("mindspore.ops.") and ".composite." not in dotted and last not in _NOT_PRIMITIVES:
        return "Primitive"
    return OTHER


class ClassIndex:
    """Class name -> Cell / Primitive / OTHER, over every class of a scanned tree."""

    def __init__(self) -> None:
        self._bases: dict[str, list[tuple[str, str]]] = defaultdict(list)  # name -> [("ms"|"name", key)]
        self._defines: dict[str, set[str]] = defaultdict(set)  # name -> its own methods
        self._memo: dict[str, str | None] = {}

    def add(self, nodes: list[ast.AST], aliases: dict[str, str]) -> None:
        for node in nodes:
            if isinstance(node, ast.ClassDef):
                for base in node.bases:
                    parts = chain(base)
                    if parts and parts[0] in aliases:
                        self._bases[node.name].append(("ms", ".".join([aliases[parts[0]], *parts[1:]])))
                    elif parts:
                        self._bases[node.name].append(("name", parts[-1]))
                self._bases.setdefault(node.name, [])
                self._defines[node.name] |= {
                    f.name for f in node.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)}

    def kind(self, name: str) -> str | None:
        """None: not a class of the tree (or defined twice with different kinds)."""
        if name not in self._bases:
            return None
        if name not in self._memo:
            self._memo[name] = OTHER  # a cycle of bases is no Cell
            kinds = {self._base_kind(base) for base in self._bases[name]} - {None, OTHER}
            self._memo[name] = kinds.pop() if len(kinds) == 1 else OTHER if not kinds else None
        return self._memo[name]

    def defines(self, name: str, method: str, seen: frozenset = frozenset()) -> bool:
        """Whether class ``name`` or a base of it in the tree defines ``method`` (the package's
        own ``shard``, not MindSpore's)."""
        if name in seen or name not in self._bases:
            return False
        return method in self._defines[name] or any(
            self.defines(key, method, seen | {name}) for how, key in self._bases[name] if how == "name")

    def _base_kind(self, base: tuple[str, str]) -> str | None:
        how, key = base
        return ms_kind(key) if how == "ms" else self.kind(key)


def _assigned(body: ast.AST, target) -> Iterator[tuple[str, ast.AST]]:
    for node in ast.walk(body):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                key = target(t)
                if key:
                    yield key, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None and target(node.target):
            yield target(node.target), node.value


def _self_attr(node: ast.AST) -> str | None:
    is_self = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
    return node.attr if is_self else None


def _name(node: ast.AST) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


Value = tuple[str | None, str | None]  # (Cell / Primitive / OTHER / None: unknown, class of the tree)
UNKNOWN: Value = (None, None)


class MethodCalls(ast.NodeVisitor):
    """Collects ``(class, method, sure)`` for each Cell / Primitive method call in one module
    (``sure``: the receiver is known to be one; else the call counts for each class with ``method``)."""

    def __init__(self, aliases, foreign, index: ClassIndex, methods: dict[str, set[str]], tensor_api):
        self.aliases, self.foreign, self.index = aliases, foreign, index
        self.methods, self.tensor_api = methods, tensor_api
        self.found: list[tuple[str, str, bool]] = []
        # the enclosing classes and functions: [value or node, what it assigns (read when first needed)]
        self._classes: list[list] = []
        self._functions: list[list] = []

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._classes.append([(self.index.kind(node.name) or OTHER, node.name), node, None])
        self._functions.append([None, {}])
        self.generic_visit(node)
        self._functions.pop()
        self._classes.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._functions.append([node, None])
        self.generic_visit(node)
        self._functions.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def _this(self) -> Value:
        return self._classes[-1][0] if self._classes else UNKNOWN

    def _attribute(self, name: str) -> Value:
        """What ``self.name = ...`` in the enclosing class assigned."""
        if not self._classes:
            return UNKNOWN
        frame = self._classes[-1]
        if frame[2] is None:
            frame[2] = {}  # an assignment that reads the map while it is built sees it empty
            frame[2] = self._values(_assigned(frame[1], _self_attr))
        return frame[2].get(name, UNKNOWN)

    def _local(self, name: str) -> Value:
        """What ``name = ...`` in the enclosing function assigned."""
        if not self._functions:
            return UNKNOWN
        frame = self._functions[-1]
        if frame[1] is None:
            frame[1] = {}
            frame[1] = self._values(_assigned(frame[0], _name))
        return frame[1].get(name, UNKNOWN)

    def _values(self, pairs: Iterator[tuple[str, ast.AST]]) -> dict[str, Value]:
        out: dict[str, Value] = {}
        for key, expr in pairs:
            value = self.value_of(expr)
            out[key] = value if out.get(key, value) == value else UNKNOWN  # assigned different things
        return out

    def value_of(self, node: ast.AST) -> Value:
        """What expression ``node`` evaluates to, as far as read statically."""
        if isinstance(node, ast.Call):
            return self._call_value(node)
        if isinstance(node, ast.Name):
            return self._this() if node.id == "self" else self._local(node.id)
        if isinstance(node, ast.Attribute) and _self_attr(node):
            return self._attribute(node.attr)
        if isinstance(node, ast.Subscript):  # an item of a CellList / SequentialCell
            return ("Cell", None) if self.value_of(node.value)[0] == "Cell" else UNKNOWN
        if isinstance(node, ast.Constant | ast.JoinedStr | ast.List | ast.Dict | ast.Tuple | ast.BinOp):
            return (OTHER, None)
        return UNKNOWN

    def _call_value(self, node: ast.Call) -> Value:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "super":
            return self._this()
        if isinstance(func, ast.Attribute) and func.attr in self.methods["Primitive"]:
            if self.value_of(func.value)[0] == "Primitive":  # P.Add().shard(...): returns the primitive
                return ("Primitive", None)
        parts = chain(func)
        if not parts:
            return UNKNOWN
        if parts[0] in self.aliases:
            return (ms_kind(".".join([self.aliases[parts[0]], *parts[1:]])), None)
        kind = self.index.kind(parts[-1])
        return (kind, parts[-1]) if kind else UNKNOWN

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        func = node.func
        if not isinstance(func, ast.Attribute):
            return
        owners = [cls for cls, names in self.methods.items() if func.attr in names]
        parts = chain(func.value)
        if not owners or (parts and parts[0] in self.aliases):  # ops.shard(...): a function
            return
        kind, cls = self.value_of(func.value)
        if cls and self.index.defines(cls, func.attr):
            return  # the tree's own method of that name
        if kind in owners:
            self.found.append((kind, func.attr, True))
        elif kind is None and not self._excluded(func):
            self.found += [(owner, func.attr, False) for owner in owners]

    def _excluded(self, func: ast.Attribute) -> bool:
        """An unknown receiver that is no candidate: from another library's module
        (``np.ones(3).shard()``), or a method name many objects have."""
        return func.attr in GENERIC or func.attr in self.tensor_api or _root(func.value) in self.foreign


def _root(node: ast.AST) -> str | None:
    """The name a chain of attributes, calls and subscripts starts from."""
    while isinstance(node, ast.Attribute | ast.Call | ast.Subscript):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None
