"""Record models again with the current recorder and compare with their committed records.

    /work/msvenv/bin/python compat/record/rerecord_check.py [--recompute] NAME [NAME ...]

Run under real MindSpore 2.10 after changing compat/record/record_zoo.py or compat/zoo_case.py:
a change meant to leave the numbers alone (the recorder's memory, its order of work) must give
every field of ``compat/tests/recorded/zoo/<model>.json`` back, ``record_s`` aside. The models
run one after the other in this one process, as a recording does. Prints SAME or DIFF and the
fields that differ; exits 1 if any differ. Writes nothing.

``--recompute`` records with MindSpore's ``Cell.recompute()`` on the repeated blocks (the
recorder's ``--recompute``): every field must still be the committed one, the record's note of
the recomputation (``ms_recompute_blocks``) aside.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import record_zoo  # noqa: E402

IGNORED = {"record_s", "ms_recompute_blocks"}


def differing_fields(old, new):
    return sorted(k for k in set(old) | set(new) if k not in IGNORED and old.get(k) != new.get(k))


def main(argv):
    recompute = "--recompute" in argv
    names = [a for a in argv if a != "--recompute"]
    if not names or names[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    record_zoo.start_mindspore()
    failed = 0
    for name in names:
        old = json.loads((record_zoo.OUT / f"{name}.json").read_text())
        new = json.loads(json.dumps(record_zoo.record(name, recompute)))  # as the recorder writes it
        diff = differing_fields(old, new)
        failed += bool(diff)
        blocks = f" ({new['ms_recompute_blocks']} blocks recomputed)" if recompute else ""
        print(f"DIFF {diff}" if diff else "SAME", name + blocks, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
