"""``paddle_recompute.mindspore``: the former name of the MindSpore layer, :mod:`paddle_mindspore`.

Kept so that ``python -m paddle_recompute.mindspore SCRIPT.py`` and
``import paddle_recompute.mindspore as ms`` in existing scripts and CI files keep working.
``import paddle_recompute`` never imports this module, so recompute alone never loads the layer.
Importing it imports :mod:`paddle_mindspore` (``pip install -e ".[mindspore]"``) and makes
``paddle_recompute.mindspore.X`` the very module ``paddle_mindspore.X`` (the same classes, the
same state); ``python -m`` then runs ``paddle_mindspore``'s own ``__main__``.
"""

import importlib
import importlib.abc
import importlib.util
import sys

try:
    import paddle_mindspore
except ImportError as exc:
    raise ImportError(
        "paddle_recompute.mindspore is the former name of the MindSpore layer, paddle_mindspore, "
        f"which cannot be imported ({exc}); install it with: pip install 'paddle-recompute[mindspore]'"
    ) from exc

_OLD, _NEW = __name__, paddle_mindspore.__name__


class _SameModule(importlib.abc.Loader):
    def __init__(self, real: str):
        self.real = real

    def create_module(self, spec):
        return importlib.import_module(self.real)

    def exec_module(self, module) -> None:
        """The real module is already executed."""


class _OldNames(importlib.abc.MetaPathFinder):
    """``paddle_recompute.mindspore.X`` -> ``paddle_mindspore.X`` (``__main__`` is found in
    ``paddle_mindspore``'s folder by the normal finders, so ``runpy`` gets its code)."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(_OLD + ".") or fullname == _OLD + ".__main__":
            return None
        real = _NEW + fullname[len(_OLD):]
        if importlib.util.find_spec(real) is None:
            return None
        return importlib.util.spec_from_loader(fullname, _SameModule(real))


if not any(isinstance(finder, _OldNames) for finder in sys.meta_path):
    sys.meta_path.insert(0, _OldNames())
sys.modules[_OLD] = paddle_mindspore
