"""Load a user's ``MODULE:CALLABLE`` (a dotted module or a ``.py`` file) and call it."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._errors import CLIError

__all__ = ["load_target", "call_target"]


def _import(module: str, command: str) -> Any:
    if module.endswith(".py") or "/" in module or "\\" in module:
        path = Path(module).resolve()
        if not path.is_file():
            raise CLIError(f"{command}: no file {module!r}")
        sys.path.insert(0, str(path.parent))  # so the file can import its neighbours
        spec = importlib.util.spec_from_file_location(path.stem, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = mod
        spec.loader.exec_module(mod)
        return mod
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, "")  # like `python -m`: modules in the current directory import
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise CLIError(f"{command}: cannot import module {module!r} ({exc}); pass MODULE:CALLABLE "
                       f"with MODULE importable from here, or path/to/file.py:CALLABLE") from None


def load_target(spec: str, command: str) -> Callable[..., Any]:
    """The callable named by ``MODULE:CALLABLE`` (``CALLABLE`` may be dotted: ``Class.method``).

    Raises:
        CLIError: the spec is malformed, the module or attribute is missing, or not callable.
    """
    module, sep, name = spec.rpartition(":")
    if not sep or not module or not name:
        raise CLIError(f"{command}: expected MODULE:CALLABLE (e.g. mypkg.models:make), got {spec!r}")
    target: Any = _import(module, command)
    for part in name.split("."):
        if not hasattr(target, part):
            raise CLIError(f"{command}: {module!r} has no attribute {name!r}")
        target = getattr(target, part)
    if not callable(target):
        raise CLIError(f"{command}: {spec} is a {type(target).__name__}, not a callable")
    return target


def call_target(spec: str, command: str) -> Any:
    """Load ``MODULE:CALLABLE`` and call it with no arguments."""
    return load_target(spec, command)()
