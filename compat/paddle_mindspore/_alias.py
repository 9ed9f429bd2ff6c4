"""Opt-in import alias: ``import mindspore`` resolves to ``paddle_mindspore``.

Installed only by the runner (``python -m paddle_mindspore``) or an explicit
:func:`install_import_alias` call; without it ``import mindspore`` is untouched, so a real
MindSpore is never shadowed by accident. ``mindspore.X.Y`` maps to
``paddle_mindspore.X.Y``; a submodule the layer does not provide raises
``ModuleNotFoundError`` naming it.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from types import ModuleType

__all__ = ["install_import_alias", "uninstall_import_alias", "import_alias_installed"]

_ALIAS = "mindspore"
_TARGET = "paddle_mindspore"


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        """The target module is already executed."""


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: object = None, target: object = None):
        if fullname != _ALIAS and not fullname.startswith(_ALIAS + "."):
            return None
        real = _TARGET + fullname[len(_ALIAS):]
        if importlib.util.find_spec(real) is None:
            raise ModuleNotFoundError(
                f"module {fullname!r} is not provided by paddle_mindspore (the MindSpore "
                f"compatibility layer); see compat/README.md for what it covers", name=fullname)
        return importlib.util.spec_from_loader(fullname, _AliasLoader(real))


_FINDER = _AliasFinder()


def import_alias_installed() -> bool:
    return _FINDER in sys.meta_path


def install_import_alias() -> None:
    """Make ``import mindspore`` (and its submodules) resolve to this compatibility layer.

    Raises:
        RuntimeError: a real MindSpore is already imported in this process.
    """
    existing = sys.modules.get(_ALIAS)
    if existing is not None and existing is not sys.modules.get(_TARGET):
        raise RuntimeError(
            "install_import_alias: a real 'mindspore' is already imported in this process; "
            "the alias would shadow it. Import paddle_mindspore explicitly instead.")
    if not import_alias_installed():
        sys.meta_path.insert(0, _FINDER)


def uninstall_import_alias() -> None:
    """Undo :func:`install_import_alias` (drops the aliased modules from ``sys.modules``)."""
    if import_alias_installed():
        sys.meta_path.remove(_FINDER)
    for name in [n for n in sys.modules if n == _ALIAS or n.startswith(_ALIAS + ".")]:
        module = sys.modules[name]
        if getattr(module, "__name__", "").startswith(_TARGET):
            del sys.modules[name]
