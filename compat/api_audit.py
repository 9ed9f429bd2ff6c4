"""Every ``mindspore`` name a source tree references, and whether the layer provides it.

    python compat/api_audit.py SOURCE_DIR [--missing] [--json OUT] [--presence RECORDED]

Read statically (ast): imports (``import mindspore.nn as nn``, ``from mindspore import ops``,
``from mindspore.ops import operations as P``), attribute chains on the names they bind
(``nn.Conv3d``, ``ops.mul``, ``P.Sort``, ``ms.numpy.ones``, ``ms.common.initializer.Normal``),
and Tensor methods: ``x.name(...)`` calls on other objects whose ``name`` is a member of
``mindspore.Tensor`` (``self.name(...)`` excluded: in a Cell that is a sublayer; the recorded
API, compat/tests/recorded/g_tensor_api.json), and calls on a chain that starts from a module
of another library excluded (``np.unique(...)``, ``random.uniform(...)``,
``np.arange(4).reshape(2, 2).repeat(2, 0)``: numpy's and Python's, not Tensor methods).

A module-level name is provided when importing ``paddle_mindspore.<module>`` and
reading the attribute raises nothing (a missing one raises ``MissingAPIError``); a Tensor
method is provided when ``paddle.Tensor`` has it after the layer is imported and it is not
one the layer guards for MindSpore code (``GUARDED``: Paddle's member means something else).

``--presence`` reads which names real MindSpore 2.10 has (``compat/record/record_api_presence.py``;
mindcv's: ``compat/tests/recorded/mindcv_api_presence.json``) and marks the names it lacks too
(``n/a``: removed APIs, typos), which the layer does not provide either.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TENSOR_API = ROOT / "compat" / "tests" / "recorded" / "g_tensor_api.json"


def _aliases(tree: ast.AST) -> dict[str, str]:
    """Local name -> dotted mindspore path, for every import of mindspore in ``tree``."""
    out = {}
    for node in ast.walk(tree):
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


def _chain(node: ast.AST) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    return None


def _foreign(tree: ast.AST) -> set[str]:
    """Local names bound by imports of other modules (``numpy``, ``random``, ...)."""
    out = set()
    for node in ast.walk(tree):
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


def _mark_parents(tree: ast.AST) -> None:
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            child.parent = node


def provided(dotted: str) -> bool:
    """Whether ``dotted`` (``mindspore.a.b``) resolves in the layer."""
    parts = ["paddle_mindspore", *dotted.split(".")[1:]]
    obj, start = None, 1
    for i in range(len(parts), 0, -1):  # the longest importable module prefix
        try:
            obj = importlib.import_module(".".join(parts[:i]))
            start = i
            break
        except ImportError:
            continue
    try:
        for part in parts[start:]:
            obj = getattr(obj, part)
    except AttributeError:  # MissingAPIError is an AttributeError
        return False
    return True


def tensor_method_provided(name: str) -> bool:
    import paddle

    import paddle_mindspore  # noqa: F401 - installs the members
    from paddle_mindspore._surface.names import GUARDED

    return name not in GUARDED and hasattr(paddle.Tensor, name)


def audit(source: Path) -> dict:
    tensor_api = set(json.loads(TENSOR_API.read_text())["Tensor"])
    where = defaultdict(set)
    methods_where = defaultdict(set)
    for path in sorted(source.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "mindspore" not in text:
            continue
        tree = ast.parse(text, str(path))
        _mark_parents(tree)
        aliases = _aliases(tree)
        foreign = _foreign(tree) - set(aliases)
        rel = str(path.relative_to(source))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and not isinstance(node.parent, ast.Attribute):
                chain = _chain(node)
                if chain and chain[0] in aliases:
                    where[".".join([aliases[chain[0]], *chain[1:]])].add(rel)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                chain = _chain(node.func)
                if (
                    (chain is None or chain[0] not in (*aliases, "self"))
                    and _root(node.func.value) not in foreign
                    and node.func.attr in tensor_api
                ):
                    methods_where[node.func.attr].add(rel)
        for dotted in aliases.values():
            where[dotted].add(rel)
    rows = [
        {"name": n, "kind": "api", "provided": provided(n), "files": sorted(f)}
        for n, f in sorted(where.items())
    ]
    rows += [
        {"name": f"Tensor.{n}", "kind": "tensor", "provided": tensor_method_provided(n), "files": sorted(f)}
        for n, f in sorted(methods_where.items())
    ]
    return {
        "source": str(source),
        "total": len(rows),
        "provided": sum(r["provided"] for r in rows),
        "rows": rows,
    }


def _version(presence: Path) -> str:
    return json.loads(presence.read_text())["mindspore"]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("--missing", action="store_true", help="list only the names not provided")
    parser.add_argument("--json", type=Path, help="write the full table here")
    parser.add_argument("--presence", type=Path, help="recorded: the names MindSpore itself has")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    result = audit(args.source)
    present = json.loads(args.presence.read_text())["present"] if args.presence else {}
    for row in result["rows"]:
        row["in_mindspore"] = present.get(row["name"])
        if not (args.missing and row["provided"]):
            mark = "yes" if row["provided"] else "n/a" if row["in_mindspore"] is False else "NO"
            print(
                f"{mark:4} {row['name']:60} {row['files'][0]}"
                + (f" (+{len(row['files']) - 1})" if len(row["files"]) > 1 else "")
            )
    print(f"{result['provided']} of {result['total']} referenced mindspore names provided")
    if present:
        absent = [r for r in result["rows"] if r["in_mindspore"] is False]
        print(f"{len(absent)} referenced names are not in MindSpore {_version(args.presence)} either "
              f"({sum(r['provided'] for r in absent)} of them provided)")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
