"""Record which names of an API audit real MindSpore 2.10 itself has.

    python compat/api_audit.py SOURCE_DIR --json audit.json          # the layer's venv
    /work/msvenv/bin/python compat/record/record_api_presence.py audit.json \
        compat/tests/recorded/mindcv_api_presence.json

For each row of the audit: a module-level name is present when importing the longest
``mindspore.<module>`` prefix and reading the rest as attributes succeeds; ``Tensor.<name>``, ``Cell.<name>``,
``Primitive.<name>`` when ``mindspore.Tensor``, ``nn.Cell``, ``ops.Primitive`` has the member.
``compat/api_audit.py --presence FILE`` then tells the names MindSpore itself lacks (a source
tree written for another version) from the layer's gaps.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import mindspore as ms

METHOD_OWNERS = {"Tensor": ms.Tensor, "Cell": ms.nn.Cell, "Primitive": ms.ops.Primitive}


def present(name: str) -> bool:
    owner, _, member = name.partition(".")
    if owner in METHOD_OWNERS:
        return hasattr(METHOD_OWNERS[owner], member)
    parts = name.split(".")
    for i in range(len(parts), 0, -1):  # the longest importable module prefix
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for part in parts[i:]:
                obj = getattr(obj, part)
        except AttributeError:
            return False
        return True
    return False


def main(argv: list[str]) -> None:
    rows = json.loads(Path(argv[0]).read_text())["rows"]
    record = {"mindspore": ms.__version__, "present": {r["name"]: present(r["name"]) for r in rows}}
    Path(argv[1]).write_text(json.dumps(record, indent=0, sort_keys=True) + "\n")
    absent = sorted(n for n, p in record["present"].items() if not p)
    print(len(rows), "names;", "absent in MindSpore:", absent)


if __name__ == "__main__":
    main(sys.argv[1:])
