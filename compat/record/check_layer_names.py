"""Which of the MindSpore names a mindformers script refers to (as listed by
compat/record/mindformers_names_used.py under real MindSpore) ``paddle_mindspore`` lacks.

    python -m paddle_mindspore compat/record/check_layer_names.py NAMES.json OUT.json

Under the runner ``mindspore`` is the layer. Each name is resolved by importing its longest
module prefix and reading the rest as attributes (a method of a class also as
``mindspore[.nn|.ops].Class.method``). OUT.json: for the ``imported``, ``ran``,
``compiled`` and ``called`` names, ``missing`` (the name does not resolve, or resolves through a module that
raises ``MissingAPIError`` for it: the error line) and ``stand_in`` (it resolves to one of the
layer's stand-ins that raise ``MissingAPIError`` when used; a problem for ``ran`` and
``called`` names).
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path


def _resolve(dotted: str):
    parts = dotted.split(".")
    last = None
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except Exception as exc:  # noqa: BLE001  (a shorter prefix is tried next)
            last = exc
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise last


def _public(dotted: str) -> list[str]:
    """``mindspore.common.tensor.Tensor.astype`` -> the public spellings of ``Tensor.astype``."""
    parts = dotted.split(".")
    found = []
    for i in range(len(parts) - 1, 0, -1):
        if parts[i][:1].isupper():
            tail = ".".join(parts[i:])
            found = [f"mindspore.{tail}", f"mindspore.nn.{tail}", f"mindspore.ops.{tail}"]
            break
    return found


def _stand_in(obj) -> bool:
    doc = getattr(type(obj), "__doc__", "") if not callable(obj) else getattr(obj, "__doc__", "")
    return "not provided" in (doc or "") or "not provided>" in repr(obj)[-20:]


def check(names: list[str]) -> dict:
    missing, stand_in = {}, []
    for name in names:
        obj, error = None, None
        for spelling in [name, *_public(name)]:
            try:
                obj = _resolve(spelling)
                break
            except Exception as exc:  # noqa: BLE001  (each failure is part of the answer)
                error = error or exc
        else:
            missing[name] = f"{type(error).__name__}: {error}".splitlines()[0][:200]
            continue
        if _stand_in(obj):
            stand_in.append(name)
    return {"checked": len(names), "missing": missing, "stand_in": stand_in}


def main(argv):
    source, out = argv
    names = json.loads(Path(source).read_text())
    result = {kind: check(list(names[kind])) for kind in ("imported", "ran", "compiled", "called")}
    Path(out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
