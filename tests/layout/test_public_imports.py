"""Examples and benchmarks are written as a user would write them: they import only public
names of ``paddle_recompute`` (never a ``_``-prefixed module or name; ``__main__`` is the
command line's public entry point).  Benchmarks that instrument the mechanism (time a
rerun's kernels, count its operator calls, solve on the planner's operator model, watch the
hook slot) use the instruments of ``paddle_recompute.bench``."""

from __future__ import annotations

import ast
import doctest
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

def _ours(dotted: str) -> bool:
    return dotted.split(".")[0] == "paddle_recompute"


def _private(dotted: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in dotted.split("."))


def private_imports(source: str) -> set[str]:
    """The private ``paddle_recompute`` modules (or ``module.name`` for a private name) that
    ``source`` imports, function-level imports included."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if _ours(a.name) and _private(a.name)}
        elif isinstance(node, ast.ImportFrom) and not node.level and _ours(node.module or ""):
            if _private(node.module):
                found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names if _private(a.name)}
    return found


def _scripts(folder: str) -> list[str]:
    return sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / folder).glob("*.py"))


def test_private_imports_are_found():
    source = ("import paddle_recompute._core.hooks\nfrom paddle_recompute import _keep\n"
              "from paddle_recompute.bench import GPT\nfrom paddle_recompute.__main__ import main\n"
              "def f():\n    from paddle_recompute._bench import gpt\n")
    assert private_imports(source) == {"paddle_recompute._core.hooks", "paddle_recompute._keep",
                                       "paddle_recompute._bench"}


@pytest.mark.parametrize("script", _scripts("examples"))
def test_example_imports_only_public_names(script):
    assert not private_imports((ROOT / script).read_text()), script


@pytest.mark.parametrize("script", _scripts("benchmarks"))
def test_benchmark_imports_only_public_names(script):
    assert not private_imports((ROOT / script).read_text()), script


def test_bench_namespace_example_runs():
    import paddle_recompute.bench

    result = doctest.testmod(paddle_recompute.bench, optionflags=doctest.ELLIPSIS)
    assert result.attempted and not result.failed
