"""Record real MindSpore 2.10's outputs for every pipeline of ds_pipelines.py.

    /work/msvenv/bin/python compat/record/record_datasets.py compat/tests/recorded/datasets

Writes ``reference.npz`` (``<pipeline>/<row>/<column>`` arrays) and ``reference.json``
(column names, dataset sizes, row counts, dtypes) beside the files.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import ds_pipelines  # noqa: E402
from make_dataset_files import cifar10  # noqa: E402


def with_cifar(root: Path, tmp: Path) -> Path:
    """A folder holding links to the committed datasets and a freshly written CIFAR-10."""
    for name in ("mnist", "folder"):
        (tmp / name).symlink_to((root / name).resolve())
    cifar10(tmp / "cifar10")
    return tmp


def main(argv):
    root = Path(argv[0] if argv else "compat/tests/recorded/datasets")
    with tempfile.TemporaryDirectory() as tmp:
        arrays, meta = record(with_cifar(root, Path(tmp)))
    np.savez_compressed(root / "reference.npz", **arrays)
    (root / "reference.json").write_text(json.dumps(meta, indent=0, sort_keys=True) + "\n")


def record(root: Path):
    arrays, meta = {}, {}
    for name, build in ds_pipelines.PIPELINES.items():
        dataset = build(str(root))
        rows = list(dataset.create_tuple_iterator(output_numpy=True, num_epochs=1))
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                arrays[f"{name}/{r}/{c}"] = value
        meta[name] = {
            "columns": dataset.get_col_names(),
            "size": dataset.get_dataset_size(),
            "rows": len(rows),
            "dtypes": [str(v.dtype) for v in rows[0]],
            "shapes": [list(v.shape) for v in rows[0]],
        }
    return arrays, meta


if __name__ == "__main__":
    main(sys.argv[1:])
