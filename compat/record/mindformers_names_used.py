"""The MindSpore names mindformers code refers to on the path a script actually runs, read from
real MindSpore 2.10 (for listing what ``paddle_mindspore`` still lacks; see
compat/record/check_layer_names.py).

    /work/msvenv/bin/python compat/record/mindformers_names_used.py OUT.json SCRIPT [ARGS...]

Runs SCRIPT as ``__main__`` under ``sys.setprofile``, collecting every mindformers function,
class body and module body that ran (an exception from the script is recorded, not raised).
Then it reads those code objects' source: each ``mindspore`` module or name imported where
they run and each dotted reference through such a name (``P.Square``, ``ms.Tensor``,
``mstype.float32``, ``mint.nn.functional.silu``) becomes a full dotted name
(``mindspore.ops.operations.Square``), kept if it resolves in real MindSpore. Methods called on
MindSpore objects (``tensor.astype``, ``cell.recompute``) are not seen this way.

OUT.json: ``{"script", "args", "error", "imported": {...}, "used": {...}}``, each mapping a
dotted name to the mindformers files that refer to it: ``imported`` names are imported by
module or class bodies (they must exist for ``import mindformers`` to work); ``used`` names are
referred to by functions that ran (and by every method of a class one of whose methods ran, so
that a ``construct`` GRAPH_MODE compiles without running it counts): they must work.
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


def _ran(script: str, args: list[str]) -> tuple[dict[str, set[int]], str | None]:
    import mindformers  # noqa: F401  (its module bodies run here, inside the profile below too)

    root = os.path.dirname(sys.modules["mindformers"].__file__)
    ran: dict[str, set[int]] = defaultdict(set)

    def profile(frame, event, arg):
        if event == "call":
            code = frame.f_code
            if code.co_filename.startswith(root):
                ran[code.co_filename].add(code.co_firstlineno)

    for name, module in list(sys.modules.items()):  # module bodies that ran before the profile
        path = getattr(module, "__file__", None) or ""
        if name.startswith("mindformers") and path.startswith(root):
            ran[path].add(1)
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    error = None
    sys.setprofile(profile)
    try:
        runpy.run_path(script, run_name="__main__")
    except BaseException as exc:  # noqa: BLE001  (the script's failure is part of the record)
        error = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()[-1]
    finally:
        sys.setprofile(None)
    return ran, error


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


def _bodies(tree: ast.Module, lines: set[int]):
    """(node, kind) for the code that ran: ``"imported"`` for module and class bodies (import
    time), ``"used"`` for functions that ran and every method of a class one of whose methods
    ran (so a ``construct`` that MindSpore's GRAPH_MODE compiles without running it counts)."""
    skip = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    if 1 in lines:
        yield from ((n, "imported") for n in tree.body if not isinstance(n, skip))

    def ran(node):
        return bool({node.lineno, *(d.lineno for d in node.decorator_list)} & lines)

    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            if ran(node):
                yield from ((n, "imported") for n in [*node.decorator_list, *node.bases, *node.body]
                            if not isinstance(n, skip))
            if any(ran(m) for m in methods):
                yield from ((m, "used") for m in methods)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and ran(node):
            yield node, "used"


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


def _names_in(path: str, lines: set[int]) -> dict[str, set[str]]:
    tree = ast.parse(Path(path).read_text())
    aliases = _aliases(tree)
    found = {"imported": set(), "used": set()}
    for body, kind in _bodies(tree, lines):
        for node in ast.walk(body):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "mindspore":
                found[kind].update(f"{node.module}.{a.name}" for a in node.names)
            chain = _chain(node) if isinstance(node, (ast.Attribute, ast.Name)) else None
            if chain and chain[0] in aliases and kind == "used":
                found[kind].add(".".join([aliases[chain[0]], *chain[1:]]))
    return found


def main(argv):
    out, script, *args = argv
    ran, error = _ran(script, args)
    names = {"imported": defaultdict(set), "used": defaultdict(set)}
    for path, lines in ran.items():
        rel = path.split("site-packages/")[-1]
        for kind, found in _names_in(path, lines).items():
            for name in found:
                names[kind][name].add(rel)
    record = {"script": os.path.basename(script), "args": args, "error": error}
    for kind, found in names.items():
        record[kind] = {n: sorted(files) for n, files in sorted(found.items()) if _resolves(n)}
    Path(out).write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
