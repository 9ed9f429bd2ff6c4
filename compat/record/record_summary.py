"""Record a MindSpore 2.10 summary file of scalars (the layer's ``SummaryRecord`` must read and
write the same format).

    /work/msvenv/bin/python compat/record/record_summary.py compat/tests/recorded/summary

Writes ``ms.summary`` (two steps of the scalars ``loss`` and ``acc``) and ``ms_summary.json``
(the values written, the file name MindSpore chose).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import mindspore as ms
import numpy as np

VALUES = {3: {"loss": 1.5, "acc": 0.25}, 4: {"loss": 0.5, "acc": 0.75}}


def main(argv):
    out = Path(argv[0] if argv else "compat/tests/recorded/summary")
    out.mkdir(parents=True, exist_ok=True)
    folder = tempfile.mkdtemp()
    with ms.train.SummaryRecord(folder) as record:
        for step, scalars in VALUES.items():
            for tag, value in scalars.items():
                record.add_value("scalar", tag, ms.Tensor(np.float32(value)))
            record.record(step)
    (name,) = os.listdir(folder)
    shutil.copy(glob.glob(os.path.join(folder, "*"))[0], out / "ms.summary")
    meta = {"file_name": name, "values": {str(k): v for k, v in VALUES.items()}, "mindspore": ms.__version__}
    (out / "ms_summary.json").write_text(json.dumps(meta, indent=0, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
