"""The package's layers (ARCHITECTURE.md): every import, function-level ones included, goes to
the module's own layer or one below, and the module graph has no cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "paddle_recompute"

# bottom to top; the public surface (top-level modules) may import any layer
LAYERS = ["_core", "_selective", "_entry", "_planner", "_interop", "mindspore", "_bench", "_cli"]
TOP_LEVEL = len(LAYERS)


def _module_name(path: Path) -> str:
    parts = path.relative_to(PKG.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PKG.rglob("*.py")}


def _resolve(name: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = name.split(".") if is_package else name.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(name: str, path: Path, modules: dict) -> set[str]:
    """Package modules that ``name`` imports anywhere in its body."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in modules}
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(name, path.name == "__init__.py", node)
            for alias in node.names:
                target = f"{source}.{alias.name}"
                if target in modules:
                    found.add(target)
                elif source in modules:
                    found.add(source)
    found.discard(name)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) < 2 or parts[1] not in LAYERS:
        return TOP_LEVEL
    return LAYERS.index(parts[1])


def test_every_folder_is_a_layer():
    folders = {p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == set(LAYERS)


@pytest.mark.parametrize("layer", LAYERS)
def test_layer_imports_only_from_layers_below(layer):
    graph = _graph()
    wrong = sorted(
        f"{mod} -> {target}"
        for mod, targets in graph.items() if _layer(mod) == LAYERS.index(layer)
        for target in targets if _layer(target) > _layer(mod)
    )
    assert not wrong, "imports from a higher layer:\n" + "\n".join(wrong)


def test_no_import_cycles():
    graph = _graph()
    state: dict[str, int] = {}
    cycles = []

    def visit(mod, stack):
        state[mod] = 1
        for target in sorted(graph[mod]):
            if state.get(target) == 1:
                cycles.append(" -> ".join(stack[stack.index(target):] + [target]))
            elif target not in state:
                visit(target, stack + [target])
        state[mod] = 2

    for mod in sorted(graph):
        if mod not in state:
            visit(mod, [mod])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_top_level_is_small():
    import paddle_recompute

    assert len(paddle_recompute.__all__) <= 20
    assert "plan" not in paddle_recompute.__all__  # the planner lives in its namespace
    assert set(paddle_recompute.planner.__all__) >= {"profile", "plan", "apply_plan", "Plan"}


@pytest.mark.parametrize("name", ["planner", "policies"])
def test_public_namespace_examples_run(name):
    import doctest
    import importlib

    module = importlib.import_module(f"paddle_recompute.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted and not result.failed


def _folder(module: str, modules: dict) -> str:
    """The package a module belongs to (a package is its own folder)."""
    return module if modules[module].name == "__init__.py" else module.rsplit(".", 1)[0]


def _private_imports(name: str, path: Path, modules: dict) -> list[str]:
    """``from <module> import _name`` in ``name`` where ``<module>`` sits in another folder."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom):
            continue
        source = _resolve(name, path.name == "__init__.py", node)
        if source not in modules:
            continue
        for alias in node.names:
            if alias.name.startswith("_") and _folder(source, modules) != _folder(name, modules):
                found.append(f"{name} imports {source}.{alias.name} (line {node.lineno})")
    return found


def test_no_folder_imports_another_folders_private_names():
    """The seams between folders are public names (``Frame``, not ``_Frame``): a module may
    import ``_``-prefixed names only from its own folder."""
    modules = _modules()
    wrong = sorted(w for name, path in modules.items() for w in _private_imports(name, path, modules))
    assert not wrong, "private names imported across folders:\n" + "\n".join(wrong)
