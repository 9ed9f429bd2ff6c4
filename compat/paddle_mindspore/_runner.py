"""``paddle-mindspore SCRIPT.py [args]`` (or ``python -m paddle_mindspore``): run a MindSpore
script on Paddle."""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Sequence

from ._alias import import_alias_installed, install_import_alias, uninstall_import_alias
from ._surface.scope import set_script_root

__all__ = ["main"]

USAGE = "usage: paddle-mindspore SCRIPT.py [args ...]\n   or: python -m paddle_mindspore SCRIPT.py [args ...]"


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``argv[0]`` as ``__main__`` with ``import mindspore`` aliased; returns the exit code.

    ``sys.argv``, ``sys.path`` and the alias are restored when the script ends (or raises).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    script = argv[0]
    if not os.path.isfile(script):
        print(f"paddle_mindspore: cannot open file {script!r}\n{USAGE}", file=sys.stderr)
        return 2
    had_alias = import_alias_installed()
    saved_argv, saved_path = sys.argv, list(sys.path)
    install_import_alias()
    sys.argv = argv
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    set_script_root(os.path.dirname(os.path.abspath(script)))  # the script's own modules are MindSpore code
    try:
        runpy.run_path(script, run_name="__main__")
    finally:  # called in-process (tests, notebooks), leave the interpreter as it was
        sys.argv, sys.path[:] = saved_argv, saved_path
        set_script_root(None)
        if not had_alias:
            uninstall_import_alias()
    return 0
