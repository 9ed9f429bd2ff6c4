"""Record the public method names of MindSpore's ``nn.Cell`` and ``ops.Primitive``.

    /work/msvenv/bin/python compat/record/record_method_names.py \
        compat/tests/recorded/ms_cell_primitive_methods.json

``compat/api_audit.py`` counts an attribute call ``x.name(...)`` as a call of ``Cell.name`` or
``Primitive.name`` when ``name`` is one of these (the tests never import MindSpore).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mindspore as ms


def methods(cls: type) -> list[str]:
    """Public callables of ``cls`` (its own and inherited, ``object``'s excluded)."""
    return sorted(n for n in dir(cls) if not n.startswith("_") and callable(getattr(cls, n, None)))


def main(argv: list[str]) -> None:
    record = {"mindspore": ms.__version__, "Cell": methods(ms.nn.Cell),
              "Primitive": methods(ms.ops.Primitive)}
    Path(argv[0]).write_text(json.dumps(record, indent=0) + "\n")
    print(len(record["Cell"]), "Cell methods,", len(record["Primitive"]), "Primitive methods")


if __name__ == "__main__":
    main(sys.argv[1:])
