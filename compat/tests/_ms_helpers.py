"""Helpers of the MindSpore compatibility tests: reference data and the compat programs.

The reference data in ``data/`` was produced by real MindSpore 2.10 (see data/README.md).
"""

from __future__ import annotations

import json
import os
import re
import runpy
import sys
from pathlib import Path

import paddle
from paddle.base import core

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[2]
COMPAT = ROOT / "compat"
ORIGINALS = COMPAT / "mindspore_originals"
# this checkout's paddle_recompute and paddle_mindspore, for subprocesses (installed or not)
PYTHONPATH = os.pathsep.join([str(ROOT), str(COMPAT)])


def checkout_env(**extra: str) -> dict[str, str]:
    """``os.environ`` for a subprocess that imports this checkout's packages first."""
    path = os.pathsep.join(filter(None, [PYTHONPATH, os.environ.get("PYTHONPATH")]))
    return dict(os.environ, PYTHONPATH=path, **extra)


def reference(name: str) -> dict:
    """A JSON reference file from data/."""
    return json.loads((DATA / name).read_text())


def semantics() -> dict[str, str]:
    """``[label] result`` lines of d_semantics_pynative.txt, as {label: result}."""
    found = {}
    for line in (DATA / "d_semantics_pynative.txt").read_text().splitlines():
        match = re.match(r"^\[(.+?)\] (.*)$", line)
        if match:
            found[match.group(1)] = match.group(2)
    return found


def error_text(label: str) -> tuple[str, str]:
    """(exception type name, message) MindSpore raised for ``label``."""
    kind, _, message = semantics()[label].partition(": ")
    return kind, message


def run_compat(name: str, argv: list[str] | None = None) -> dict:
    """Execute compat/<name>.py (its module-level program runs) and return its globals."""
    old_argv = sys.argv
    sys.argv = [str(COMPAT / name), *(argv or [])]
    try:
        return runpy.run_path(str(COMPAT / name), run_name="compat_" + name.removesuffix(".py"))
    finally:
        sys.argv = old_argv


def held_bytes() -> int:
    """Host bytes currently allocated by Paddle."""
    return core.host_memory_stat_current_value("Allocated", 0)


def load_definitions(name: str) -> dict:
    """Imports, functions and classes of compat/<name>.py, without running its program."""
    import ast

    tree = ast.parse((COMPAT / name).read_text())
    kept = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef)
    tree.body = [node for node in tree.body if isinstance(node, kept)]
    namespace: dict = {"__name__": "compat_defs_" + name.removesuffix(".py")}
    exec(compile(tree, str(COMPAT / name), "exec"), namespace)
    return namespace


class Block(paddle.nn.Layer):
    """A plain Paddle layer that counts its forward calls (class-wide)."""

    calls = 0

    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 4)

    def forward(self, x):
        Block.calls += 1
        return paddle.nn.functional.relu(self.fc(x))
