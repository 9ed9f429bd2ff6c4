"""Record which primitive classes real MindSpore 2.10 exposes in ``mindspore.ops`` and
``mindspore.ops.operations``.

    python compat/record/record_ops_primitives.py compat/tests/recorded/ops_primitive_names.json

(with MindSpore 2.10 installed).

A primitive class is a public attribute of the module that is a class derived from
``mindspore.ops.Primitive`` (``Primitive`` itself included). MindSpore builds ``mindspore.ops``
with ``from mindspore.ops.operations import *`` and adds ``Primitive`` and the other primitive
bases; ``compat/tests/test_ms_ops_exposure.py`` checks that the layer's two modules expose the
primitives it provides exactly where MindSpore does.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mindspore as ms
import mindspore.ops
import mindspore.ops.operations

MODULES = {"mindspore.ops": mindspore.ops, "mindspore.ops.operations": mindspore.ops.operations}


def primitive_names(module) -> list[str]:
    """The public names of ``module`` whose values are ``Primitive`` classes, sorted."""
    names = []
    for name in dir(module):
        value = getattr(module, name)
        primitive = isinstance(value, type) and issubclass(value, mindspore.ops.Primitive)
        if not name.startswith("_") and primitive:
            names.append(name)
    return sorted(names)


def main(argv: list[str]) -> None:
    record = {"mindspore": ms.__version__, **{key: primitive_names(mod) for key, mod in MODULES.items()}}
    Path(argv[0]).write_text(json.dumps(record, indent=0, sort_keys=True) + "\n")
    print({key: len(record[key]) for key in MODULES})


if __name__ == "__main__":
    main(sys.argv[1:])
