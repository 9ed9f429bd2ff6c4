"""Every ``mindspore`` name a source tree references, and whether the layer provides it.

    python compat/api_audit.py SOURCE_DIR [--entry IMPORTS] [--missing] [--json OUT] [--presence RECORDED]
    python compat/api_audit.py --readme     # rewrite the counts in compat/paddle_mindspore/README.md

Read statically (ast): imports (``import mindspore.nn as nn``, ``from mindspore import ops``,
``from mindspore.ops import operations as P``), attribute chains on the names they bind
(``nn.Conv3d``, ``ops.mul``, ``P.Sort``, ``ms.numpy.ones``, ``ms.common.initializer.Normal``),
Tensor methods: ``x.name(...)`` calls on other objects whose ``name`` is a member of
``mindspore.Tensor`` (``self.name(...)`` excluded: in a Cell that is a sublayer; the recorded
API, compat/tests/recorded/g_tensor_api.json), and calls on a chain that starts from a module
of another library excluded (``np.unique(...)``, ``random.uniform(...)``,
``np.arange(4).reshape(2, 2).repeat(2, 0)``: numpy's and Python's, not Tensor methods); and
method calls on cells and primitives (``self.matmul.shard(...)``, ``P.Add().recompute()``,
``self.set_comm_fusion(...)``; which calls those are: ``api_audit_methods.py``).

A module-level name is provided when importing ``paddle_mindspore.<module>`` and
reading the attribute raises nothing (a missing one raises ``MissingAPIError``); a Tensor
method is provided when ``paddle.Tensor`` has it after the layer is imported and it is not
one the layer guards for MindSpore code (``GUARDED``: Paddle's member means something else);
``Cell.m`` / ``Primitive.m`` when the layer's ``nn.Cell`` / ``ops.Primitive`` has ``m`` (a
Cell method only ``paddle.nn.Layer`` defines is marked ``pd``: Paddle's method of that name).

``--entry`` restricts the count to the files that importing one module loads under real
MindSpore (recorded: ``compat/record/record_entry_imports.py``). ``--presence`` reads which
names real MindSpore 2.10 has (``compat/record/record_api_presence.py``; mindcv's:
``compat/tests/recorded/mindcv_api_presence.json``) and marks the names it lacks too (``n/a``:
removed APIs, typos), which the layer does not provide either.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from api_audit_methods import ClassIndex, MethodCalls, chain  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "compat" / "tests" / "recorded"
TENSOR_API = RECORDED / "g_tensor_api.json"
METHODS = RECORDED / "ms_cell_primitive_methods.json"
CLASSES = {"Cell": "mindspore.nn.Cell", "Primitive": "mindspore.ops.Primitive"}


def _aliases(nodes: list[ast.AST]) -> dict[str, str]:
    """Local name -> dotted mindspore path, for every import of mindspore among ``nodes``."""
    out = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "mindspore" or a.name.startswith("mindspore."):
                    out[a.asname or a.name.split(".")[0]] = a.name if a.asname else "mindspore"
        elif (
            isinstance(node, ast.ImportFrom)
            and not node.level
            and node.module
            and (node.module == "mindspore" or node.module.startswith("mindspore."))
        ):
            for a in node.names:
                if a.name != "*":
                    out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def _foreign(nodes: list[ast.AST]) -> set[str]:
    """Local names bound by imports of other modules (``numpy``, ``random``, ...)."""
    out = set()
    for node in nodes:
        if isinstance(node, ast.Import | ast.ImportFrom):
            module = node.module if isinstance(node, ast.ImportFrom) else None
            for a in node.names:
                full = module or a.name
                if a.name != "*" and not (full == "mindspore" or full.startswith("mindspore.")):
                    out.add(a.asname or a.name.split(".")[0])
    return out


def _root(node: ast.AST) -> str | None:
    """The name an expression's chain of attributes and calls starts from
    (``np.arange(4).reshape(2, 2)`` -> ``np``)."""
    while isinstance(node, ast.Attribute | ast.Call):
        node = node.value if isinstance(node, ast.Attribute) else node.func
    return node.id if isinstance(node, ast.Name) else None


def resolve(dotted: str) -> object:
    """The layer's object for ``dotted`` (``mindspore.a.b``); AttributeError when not provided."""
    parts = ["paddle_mindspore", *dotted.split(".")[1:]]
    obj, start = None, 1
    for i in range(len(parts), 0, -1):  # the longest importable module prefix
        try:
            obj = importlib.import_module(".".join(parts[:i]))
            start = i
            break
        except ImportError:
            continue
    for part in parts[start:]:
        obj = getattr(obj, part)  # MissingAPIError is an AttributeError
    return obj


def provided(dotted: str) -> bool:
    """Whether ``dotted`` (``mindspore.a.b``) resolves in the layer to something that works: a
    stand-in that only lets a module import (and raises when used) counts as missing."""
    from paddle_mindspore._unprovided import is_unprovided

    try:
        obj = resolve(dotted)
    except AttributeError:
        return False
    return not is_unprovided(obj)


def tensor_method_provided(name: str) -> bool:
    import paddle

    import paddle_mindspore  # noqa: F401 - installs the members
    from paddle_mindspore._surface.names import GUARDED

    return name not in GUARDED and hasattr(paddle.Tensor, name)


def method_provided(owner: str, name: str) -> str | None:
    """``"yes"`` when the layer's ``Cell`` / ``Primitive`` defines ``name``, ``"pd"`` when only a
    Paddle base class (``paddle.nn.Layer``) does, None when neither."""
    cls = resolve(CLASSES[owner])
    for klass in cls.__mro__:
        if name in vars(klass):
            return "yes" if klass.__module__.startswith("paddle_mindspore") else "pd"
    return None


def _trees(source: Path) -> dict[str, ast.AST]:
    trees = {}
    for path in sorted(source.rglob("*.py")):
        trees[path.relative_to(source).as_posix()] = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return trees


def _scan(trees: dict[str, ast.AST]) -> tuple[dict, dict, dict]:
    """(api name -> files, Tensor method -> files,
    (class, method) -> {"calls": sites per file, "unsure": sites per file whose receiver is unknown})."""
    tensor_api = set(json.loads(TENSOR_API.read_text())["Tensor"])
    recorded = json.loads(METHODS.read_text())
    methods = {cls: set(recorded[cls]) for cls in CLASSES}
    nodes = {rel: list(ast.walk(tree)) for rel, tree in trees.items()}
    aliases = {rel: _aliases(nodes[rel]) for rel in trees}
    index = ClassIndex()
    for rel in trees:
        index.add(nodes[rel], aliases[rel])
    where, tensor_where = defaultdict(set), defaultdict(set)
    method_sites = defaultdict(lambda: {"calls": Counter(), "unsure": Counter()})
    for rel, tree in trees.items():
        foreign = _foreign(nodes[rel]) - set(aliases[rel])
        inner = {id(node.value) for node in nodes[rel] if isinstance(node, ast.Attribute)}
        for node in nodes[rel]:
            if isinstance(node, ast.Attribute) and id(node) not in inner:
                parts = chain(node)
                if parts and parts[0] in aliases[rel]:
                    where[".".join([aliases[rel][parts[0]], *parts[1:]])].add(rel)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                parts = chain(node.func)
                if (
                    (parts is None or parts[0] not in (*aliases[rel], "self"))
                    and _root(node.func.value) not in foreign
                    and node.func.attr in tensor_api
                ):
                    tensor_where[node.func.attr].add(rel)
        for dotted in aliases[rel].values():
            where[dotted].add(rel)
        calls = MethodCalls(aliases[rel], foreign, index, methods, tensor_api)
        calls.visit(tree)
        for owner, name, sure in calls.found:
            method_sites[owner, name]["calls" if sure else "unsure"][rel] += 1
    return where, tensor_where, method_sites


def audit(source: Path) -> dict:
    """Every referenced name under ``source``: ``rows`` of name, kind, provided, files
    (and for Cell / Primitive methods ``calls`` and ``unsure``: call sites per file, whose receiver
    is known to be one / unknown; ``paddle``: Paddle's method)."""
    where, tensor_where, method_sites = _scan(_trees(source))
    rows = [
        {"name": n, "kind": "api", "provided": provided(n), "files": sorted(f)}
        for n, f in sorted(where.items())
    ]
    rows += [
        {"name": f"Tensor.{n}", "kind": "tensor", "provided": tensor_method_provided(n), "files": sorted(f)}
        for n, f in sorted(tensor_where.items())
    ]
    for (owner, name), sites in sorted(method_sites.items()):
        how = method_provided(owner, name)
        rows.append({"name": f"{owner}.{name}", "kind": owner.lower(), "provided": how is not None,
                     "paddle": how == "pd", "files": sorted({*sites["calls"], *sites["unsure"]}),
                     **{k: dict(sorted(v.items())) for k, v in sites.items()}})
    return _totals({"source": str(source), "rows": rows})


def _totals(result: dict) -> dict:
    rows = result["rows"]
    result["total"] = len(rows)
    result["provided"] = sum(r["provided"] for r in rows)
    return result


def restrict(result: dict, files: list[str]) -> dict:
    """``result`` counted over ``files`` only (paths relative to the source folder)."""
    keep = set(files)
    rows = []
    for row in result["rows"]:
        hit = [f for f in row["files"] if f in keep]
        if hit:
            row = dict(row, files=hit)
            for key in ("calls", "unsure"):
                if key in row:
                    row[key] = {f: n for f, n in row[key].items() if f in keep}
            rows.append(row)
    return _totals(dict(result, rows=rows, files=len(keep)))


def entry_files(recorded: Path) -> list[str]:
    return json.loads(recorded.read_text())["files"]


def _version(presence: Path) -> str:
    return json.loads(presence.read_text())["mindspore"]


def _print(result: dict, missing_only: bool, present: dict) -> None:
    for row in result["rows"]:
        row["in_mindspore"] = present.get(row["name"])
        if not (missing_only and row["provided"]):
            mark = ("pd" if row.get("paddle") else "yes") if row["provided"] else (
                "n/a" if row["in_mindspore"] is False else "NO")
            calls = (f" {sum(row['calls'].values())} calls, {sum(row['unsure'].values())} unsure"
                     if "calls" in row else "")
            print(
                f"{mark:4} {row['name']:60} {row['files'][0]}"
                + (f" (+{len(row['files']) - 1})" if len(row["files"]) > 1 else "") + calls
            )
    print(f"{result['provided']} of {result['total']} referenced mindspore names provided")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", type=Path, nargs="?")
    parser.add_argument("--entry", type=Path, help="recorded: the files importing one module loads")
    parser.add_argument("--missing", action="store_true", help="list only the names not provided")
    parser.add_argument("--json", type=Path, help="write the full table here")
    parser.add_argument("--presence", type=Path, help="recorded: the names MindSpore itself has")
    parser.add_argument("--readme", action="store_true", help="rewrite the counts in the layer's README")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if args.readme:
        import api_audit_readme

        print(api_audit_readme.update())
        return 0
    if args.source is None:
        parser.error("SOURCE_DIR is required (or --readme)")
    result = audit(args.source)
    if args.entry:
        result = restrict(result, entry_files(args.entry))
    present = json.loads(args.presence.read_text())["present"] if args.presence else {}
    _print(result, args.missing, present)
    if present:
        absent = [r for r in result["rows"] if r["in_mindspore"] is False]
        print(f"{len(absent)} referenced names are not in MindSpore {_version(args.presence)} either "
              f"({sum(r['provided'] for r in absent)} of them provided)")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
