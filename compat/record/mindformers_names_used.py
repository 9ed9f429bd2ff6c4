"""The MindSpore names mindformers code refers to on the path a script actually runs, read from
real MindSpore 2.10 (for listing what ``paddle_mindspore`` still lacks; see
compat/record/check_layer_names.py).

    /work/msvenv/bin/python compat/record/mindformers_names_used.py OUT.json SCRIPT [ARGS...]

Runs SCRIPT as ``__main__`` under ``sys.settrace``, collecting every mindformers function,
class body and module body that ran and the lines that ran (an exception from the script is
recorded, not raised). Then it reads those code objects' source: each ``mindspore`` module or
name imported where they run and each dotted reference through such a name (``P.Square``, ``ms.Tensor``,
``mstype.float32``, ``mint.nn.functional.silu``) becomes a full dotted name
(``mindspore.ops.operations.Square``), kept if it resolves in real MindSpore. Methods called on
MindSpore objects are listed apart (``called``).

OUT.json: ``{"script", "args", "error", "imported", "ran", "compiled", "called"}``, the last four
mapping a dotted name to the mindformers files that refer to it: ``imported`` names are imported
by module or class bodies (they must exist for ``import mindformers`` to work); ``ran`` names
are referred to on lines that ran (traced with ``sys.settrace``): they must work; ``compiled``
names are referred to elsewhere in a class one of whose methods ran (a ``construct`` that
GRAPH_MODE compiles without running it; also branches not taken in PyNative mode); ``called``
names are the MindSpore Python functions and methods mindformers code called directly
(``mindspore.common.tensor.Tensor.astype``, ``mindspore.nn.cell.Cell.recompute``; methods
implemented in C++ are not seen).
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import runpy
import sys
import traceback
from collections import defaultdict
from pathlib import Path


def _ran(script: str, args: list[str]):
    """Run the script; return (first lines of the code objects that ran, lines that ran) per
    mindformers file, and the script's error line (None if it finished)."""
    import mindformers  # noqa: F401  (imported before the trace: its module bodies count as ran)

    root = os.path.dirname(sys.modules["mindformers"].__file__)
    firsts: dict[str, set[int]] = defaultdict(set)
    lines: dict[str, set[int]] = defaultdict(set)
    called: dict[str, set[str]] = defaultdict(set)
    ms_root = os.path.dirname(sys.modules["mindspore"].__file__)

    def local(frame, event, arg):
        if event == "line":
            lines[frame.f_code.co_filename].add(frame.f_lineno)
        return local

    def trace(frame, event, arg):
        code = frame.f_code
        if event != "call":
            return None
        if code.co_filename.startswith(root):
            firsts[code.co_filename].add(code.co_firstlineno)
            return local
        caller = frame.f_back
        if (code.co_filename.startswith(ms_root) and caller is not None
                and caller.f_code.co_filename.startswith(root) and "<" not in code.co_qualname):
            module = frame.f_globals.get("__name__", "")
            called[f"{module}.{code.co_qualname}"].add(caller.f_code.co_filename)
        return None

    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) or ""
        if name.startswith("mindformers") and path.startswith(root):
            firsts[path].add(1)
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    error = None
    sys.settrace(trace)
    try:
        runpy.run_path(script, run_name="__main__")
    except BaseException as exc:  # noqa: BLE001  (the script's failure is part of the record)
        error = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()[-1]
    finally:
        sys.settrace(None)
    return firsts, lines, called, error


def _aliases(tree: ast.Module) -> dict[str, str]:
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "mindspore":
                    found[a.asname or a.name.split(".")[0]] = a.name if a.asname else "mindspore"
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] == "mindspore":
                for a in node.names:
                    found[a.asname or a.name] = f"{node.module}.{a.name}"
    return found


def _chain(node: ast.AST) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    return None


def _bodies(tree: ast.Module, firsts: set[int]):
    """(node, kind): ``"imported"`` for module and class bodies that ran (import time),
    ``"ran"`` for functions that ran, ``"compiled"`` for every method of a class one of whose
    methods ran (a ``construct`` that MindSpore's GRAPH_MODE compiles without running it)."""
    skip = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    if 1 in firsts:
        yield from ((n, "imported") for n in tree.body if not isinstance(n, skip))

    def ran(node):
        return bool({node.lineno, *(d.lineno for d in node.decorator_list)} & firsts)

    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            if ran(node):
                yield from ((n, "imported") for n in [*node.decorator_list, *node.bases, *node.body]
                            if not isinstance(n, skip))
            if any(ran(m) for m in methods):
                yield from ((m, "compiled") for m in methods)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and ran(node):
            yield node, "ran"


def _statement_lines(function: ast.AST) -> dict[int, range]:
    """For each expression node's id in ``function``: the lines of the simple statement (or
    compound statement header) it belongs to."""
    spans = {}

    def visit(node, span):
        if isinstance(node, ast.stmt):
            body = getattr(node, "body", None)
            compound = isinstance(body, list) and body and isinstance(body[0], ast.stmt)
            end = body[0].lineno - 1 if compound else node.end_lineno
            span = range(node.lineno, max(node.lineno, end) + 1)
        spans[id(node)] = span
        for child in ast.iter_child_nodes(node):
            visit(child, span)

    visit(function, range(function.lineno, function.lineno + 1))
    return spans


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except Exception:  # noqa: BLE001  (a shorter prefix is tried next)
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


def _names_in(path: str, firsts: set[int], lines: set[int]) -> dict[str, set[str]]:
    tree = ast.parse(Path(path).read_text())
    aliases = _aliases(tree)
    found = {"imported": set(), "ran": set(), "compiled": set()}
    for body, kind in _bodies(tree, firsts):
        spans = _statement_lines(body) if kind == "ran" else {}
        for node in ast.walk(body):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "mindspore":
                if kind == "imported" or any(n in lines for n in spans.get(id(node), ())):
                    found[kind].update(f"{node.module}.{a.name}" for a in node.names)
            chain = _chain(node) if isinstance(node, (ast.Attribute, ast.Name)) else None
            if not chain or chain[0] not in aliases or kind == "imported":
                continue
            if kind == "ran" and not any(n in lines for n in spans.get(id(node), ())):
                continue  # on a line of a function that ran but not on a line that ran
            found[kind].add(".".join([aliases[chain[0]], *chain[1:]]))
    return found


def main(argv):
    out, script, *args = argv
    firsts, lines, called, error = _ran(script, args)
    names = {"imported": defaultdict(set), "ran": defaultdict(set), "compiled": defaultdict(set)}
    for path, starts in firsts.items():
        rel = path.split("site-packages/")[-1]
        for kind, found in _names_in(path, starts, lines.get(path, set())).items():
            for name in found:
                names[kind][name].add(rel)
    for name in names["ran"]:
        names["compiled"].pop(name, None)
    names["called"] = {n: {p.split("site-packages/")[-1] for p in files} for n, files in called.items()}
    record = {"script": os.path.basename(script), "args": args, "error": error}
    for kind, found in names.items():
        record[kind] = {n: sorted(files) for n, files in sorted(found.items()) if _resolves(n)}
    Path(out).write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
