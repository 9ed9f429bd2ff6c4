"""Planning time: ``profile`` plus ``plan(budget=0.5)`` (final measurement included) per model
of ``benchmarks/regions.py``, for the checkout at ``REPO``; one JSON line (CPU seconds of this
process, wall seconds, operator units recorded, the plan's option kinds).

    python benchmarks/plan_cost.py REPO resnet18,densenet121,transformer,twice

Run it on two checkouts in turn (before / after a change), interleaved, to compare.
"""

import json
import sys
import time

repo, names = sys.argv[1], sys.argv[2].split(",")
sys.path[:0] = [repo, repo + "/benchmarks"]  # that checkout's package and models

import paddle  # noqa: E402
import regions  # noqa: E402

from paddle_recompute import planner  # noqa: E402

paddle.set_device("cpu")
out = {}
for name in names:
    model, args, kwargs = regions.subject(name)
    model.train()
    wall, cpu = time.perf_counter(), time.process_time()
    prof = planner.profile(model, *args, repeats=1, **kwargs)
    p = planner.plan(model, *args, budget=0.5, profile=prof, **kwargs)
    out[name] = {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu,
                 "units": len(prof.op_profiles), "options": sorted({c.kind for c in p.choices}),
                 "extra_ms": 1e3 * p.extra_s}
print(json.dumps(out))
