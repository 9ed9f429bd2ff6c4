"""The packages' layers (ARCHITECTURE.md): every import, function-level ones included, goes to
the module's own layer or one below, and the module graph has no cycle.  The MindSpore layer,
``paddle_mindspore`` (compat/paddle_mindspore), is a package of its own on top of recompute: it
uses recompute only through public names and ``paddle_recompute.extend``, and ``import
paddle_recompute`` never loads it."""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "paddle_recompute"
MS_PKG = ROOT / "compat" / "paddle_mindspore"

# bottom to top; the public surface (top-level modules) may import any layer.  ``mindspore`` is
# the former name of paddle_mindspore, an alias that imports nothing of this package.
LAYERS = ["_core", "_selective", "_entry", "_planner", "_interop", "_bench", "_cli", "mindspore"]
TOP_LEVEL = len(LAYERS)

# paddle_mindspore, bottom to top: its private machinery, then MindSpore's packages in the order
# they build on each other (``train`` wraps ``nn`` cells); its __init__/__main__ may import any.
MS_LAYERS = [
    "_validate", "_checkparam", "_unprovided", "_layout", "_shard", "_bprop", "log", "_one_device", "_dtype",
    "_initializer", "_paddle_members", "_backward", "_grad_hooks", "_replay", "_recipes", "_region",
    "_forward_reuse", "_cell_names",
    "_primitive", "_tensor", "_surface", "_grad", "_cell", "_api", "_layer_optin", "_jit", "_c_expression",
    "_extends", "parallel", "context", "device_context", "runtime", "utils", "profiler", "communication",
    "dataset", "_seed", "common", "ops", "numpy", "mint", "nn", "boost", "train", "amp", "_alias",
    "_runner",
]


def _module_name(path: Path, pkg: Path = PKG) -> str:
    parts = path.relative_to(pkg.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(pkg: Path = PKG) -> dict[str, Path]:
    return {_module_name(p, pkg): p for p in pkg.rglob("*.py")}


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


@functools.cache
def _graph(pkg: Path = PKG) -> dict[str, set[str]]:
    modules = _modules(pkg)
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _layer(module: str, layers: list[str] = LAYERS) -> int:
    parts = module.split(".")
    if len(parts) < 2 or parts[1] not in layers:
        return len(layers)
    return layers.index(parts[1])


def test_every_folder_is_a_layer():
    folders = {p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == set(LAYERS)


def test_every_part_of_the_mindspore_layer_is_a_layer():
    parts = {p.stem if p.suffix == ".py" else p.name for p in MS_PKG.iterdir()
             if (p.suffix == ".py" or (p / "__init__.py").exists())}
    assert parts - {"__init__", "__main__"} == set(MS_LAYERS)


def _upward(pkg: Path, layers: list[str], layer: str) -> list[str]:
    graph = _graph(pkg)
    return sorted(
        f"{mod} -> {target}"
        for mod, targets in graph.items() if _layer(mod, layers) == layers.index(layer)
        for target in targets if _layer(target, layers) > _layer(mod, layers)
    )


@pytest.mark.parametrize("layer", LAYERS)
def test_layer_imports_only_from_layers_below(layer):
    wrong = _upward(PKG, LAYERS, layer)
    assert not wrong, "imports from a higher layer:\n" + "\n".join(wrong)


@pytest.mark.parametrize("layer", MS_LAYERS)
def test_mindspore_layer_imports_only_from_layers_below(layer):
    wrong = _upward(MS_PKG, MS_LAYERS, layer)
    assert not wrong, "imports from a higher layer:\n" + "\n".join(wrong)


def _cycles(graph: dict[str, set[str]]) -> list[str]:
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
    return cycles


@pytest.mark.parametrize("pkg", [PKG, MS_PKG], ids=["paddle_recompute", "paddle_mindspore"])
def test_no_import_cycles(pkg):
    cycles = _cycles(_graph(pkg))
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_mindspore_layer_imports_its_modules_at_module_level():
    """An import hidden in a function is how a cycle or an upward import stays unnoticed."""
    modules = _modules(MS_PKG)
    hidden = []
    for name, path in modules.items():
        for function in ast.walk(ast.parse(path.read_text())):
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                hidden += [f"{name}:{node.lineno} in {function.name}()" for node in ast.walk(function)
                           if isinstance(node, ast.Import | ast.ImportFrom)
                           and _imports_layer(name, path, node)]
    hidden = sorted(set(hidden))
    assert not hidden, "imports of the layer's own modules inside functions:\n" + "\n".join(hidden)


def _imports_layer(name: str, path: Path, node: ast.Import | ast.ImportFrom) -> bool:
    if isinstance(node, ast.Import):
        return any(a.name.split(".")[0] == MS_PKG.name for a in node.names)
    return _resolve(name, path.name == "__init__.py", node).split(".")[0] == MS_PKG.name


def _recompute_imports(path: Path) -> list[tuple[str, str]]:
    """(module, name) of every ``paddle_recompute`` import in ``path`` (name '' for ``import m``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(a.name, "") for a in node.names if a.name.split(".")[0] == PKG.name]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module.split(".")[0] == PKG.name:
            found += [(node.module, a.name) for a in node.names]
    return found


def test_mindspore_layer_uses_only_the_public_extension_api():
    """paddle_mindspore imports ``paddle_recompute``'s public names and ``paddle_recompute.extend``,
    never a private module or name."""
    import paddle_recompute
    import paddle_recompute.extend as extend

    allowed = {"paddle_recompute": set(paddle_recompute.__all__) | {"extend"},
               "paddle_recompute.extend": set(extend.__all__)}
    wrong = sorted(f"{path.relative_to(ROOT)}: {module} {name}".rstrip()
                   for path in MS_PKG.rglob("*.py") for module, name in _recompute_imports(path)
                   if name not in allowed.get(module, ()))
    assert not wrong, "paddle_mindspore imports recompute's non-public names:\n" + "\n".join(wrong)
    used = set()
    for path in MS_PKG.rglob("*.py"):
        used |= {name for module, name in _recompute_imports(path) if module == "paddle_recompute.extend"}
        used |= {node.attr for node in ast.walk(ast.parse(path.read_text()))
                 if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                 and node.value.id == "extend"}
    assert used == set(extend.__all__), "the extension API holds exactly what the layer uses"


# the old name's alias, and the thread stress harness, whose workloads mix both packages (it is
# imported by tests and benchmarks only, never by ``import paddle_recompute``)
MS_IMPORTERS = {"paddle_recompute.mindspore", "paddle_recompute._bench.threads"}


def test_recompute_never_imports_the_mindspore_layer():
    """Only MS_IMPORTERS import paddle_mindspore."""
    wrong = sorted(name for name, path in _modules().items() if name not in MS_IMPORTERS
                   and any(n.split(".")[0] == MS_PKG.name for n in _all_imported(path)))
    assert not wrong, f"paddle_recompute modules that import paddle_mindspore: {wrong}"


def _all_imported(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names.append(node.module or "")
    return names


FRESH = """
import sys
import paddle_recompute, paddle_recompute.planner, paddle_recompute.policies, paddle_recompute.testing
import paddle_recompute.extend
print(sorted(m for m in sys.modules if m.startswith(("paddle_mindspore", "paddle_recompute.mindspore"))))
"""


def _python(code: str) -> str:
    env_path = str(ROOT) + ":" + str(ROOT / "compat")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                            timeout=600, env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin",
                                              "PYTHONWARNINGS": "ignore"})
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.strip().splitlines()[-1]


def test_import_paddle_recompute_loads_no_mindspore_module():
    assert _python(FRESH) == "[]"


def test_the_old_name_is_the_same_package():
    code = ("import paddle_mindspore as ms, paddle_recompute.mindspore as old\n"
            "import paddle_recompute.mindspore.nn as old_nn\n"
            "from paddle_recompute.mindspore.train.metrics import Loss\n"
            "print(old is ms, old_nn is ms.nn, Loss is ms.nn.metrics.Loss)")
    assert _python(code) == "True True True"


def test_the_console_scripts_name_importable_mains():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"paddle-recompute": "paddle_recompute.__main__:main",
                       "paddle-mindspore": "paddle_mindspore.__main__:main"}
    assert _python("from paddle_mindspore.__main__ import main\nprint(main(['--help']))") == "0"


def test_top_level_is_small():
    import paddle_recompute

    assert len(paddle_recompute.__all__) <= 20
    assert "plan" not in paddle_recompute.__all__  # the planner lives in its namespace
    assert set(paddle_recompute.planner.__all__) >= {"profile", "plan", "apply_plan", "Plan"}


@pytest.mark.parametrize("name", ["planner", "policies", "extend"])
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


@pytest.mark.parametrize("pkg", [PKG, MS_PKG], ids=["paddle_recompute", "paddle_mindspore"])
def test_no_folder_imports_another_folders_private_names(pkg):
    """The seams between folders are public names (``Frame``, not ``_Frame``): a module may
    import ``_``-prefixed names only from its own folder."""
    modules = _modules(pkg)
    wrong = sorted(w for name, path in modules.items() for w in _private_imports(name, path, modules))
    assert not wrong, "private names imported across folders:\n" + "\n".join(wrong)


# the planner's concerns, bottom to top (``_planner/__init__.py``): each imports only those
# before it, the solvers nothing of the package and no framework
PLANNER = ["solvers", "harness", "profile", "options", "plan"]


def _planner_part(module: str) -> int | None:
    parts = module.split(".")
    if parts[:2] != ["paddle_recompute", "_planner"] or len(parts) < 3:
        return None
    return PLANNER.index(parts[2])


def test_planner_is_in_subpackages_by_concern():
    folder = PKG / "_planner"
    assert {p.stem for p in folder.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()} \
        == set(PLANNER) | {"__init__"}
    for part in PLANNER:
        init = folder / part / "__init__.py" if (folder / part).is_dir() else folder / f"{part}.py"
        assert ast.get_docstring(ast.parse(init.read_text())), f"_planner/{part} has no docstring"


def test_planner_concerns_import_only_those_below():
    graph = _graph()
    wrong = sorted(
        f"{mod} -> {target}"
        for mod, targets in graph.items() if _planner_part(mod) is not None
        for target in targets
        if _planner_part(target) is not None and _planner_part(target) > _planner_part(mod)
    )
    assert not wrong, "planner imports from a later concern:\n" + "\n".join(wrong)


def test_solvers_are_pure_python():
    for path in (PKG / "_planner" / "solvers").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                     else [])
            assert not any(n.split(".")[0] == "paddle" for n in names), f"{path.name} imports paddle"
            assert not (isinstance(node, ast.ImportFrom) and node.level > 1), \
                f"{path.name} imports from outside the solvers"
