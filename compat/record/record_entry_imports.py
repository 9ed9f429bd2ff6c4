"""Record which of a package's modules importing one of its modules loads, under real MindSpore.

    cd /tmp && /work/msvenv/bin/python /path/to/compat/record/record_entry_imports.py \
        mindformers.models.llama compat/tests/recorded/mindformers_llama_imports.json

Imports ``ENTRY`` in this fresh process and lists every module of its top-level package then in
``sys.modules`` as a file path relative to the package's folder (``models/llama/__init__.py``).
``compat/api_audit.py --entry`` restricts its count to those files: the code a user of ``ENTRY``
actually runs, whether or not the layer can import it yet. (Run it from a scratch folder:
mindformers writes its log under the working directory.)
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import sys
from pathlib import Path


def loaded_files(top: str) -> list[str]:
    root = Path(importlib.import_module(top).__file__).parent
    files = set()
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if (name == top or name.startswith(top + ".")) and path:
            files.add(Path(path).relative_to(root).as_posix())
    return sorted(files)


def main(argv: list[str]) -> None:
    entry, out = argv
    importlib.import_module(entry)
    top = entry.split(".")[0]
    import mindspore

    record = {
        "entry": entry,
        "versions": {top: importlib.metadata.version(top), "mindspore": mindspore.__version__},
        "files": loaded_files(top),
    }
    Path(out).write_text(json.dumps(record, indent=0) + "\n")
    print(entry, "loads", len(record["files"]), "files of", top)


if __name__ == "__main__":
    main(sys.argv[1:])
