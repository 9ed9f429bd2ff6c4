"""Plans for a large model from profiles of a small configuration of it (``scale_profile``),
checked on a model that fits: the scaled profile against the measured one, and each plan's
predicted bytes against what the large model holds under it.

Two cases on PaddleFormers' Llama (float32, CPU): depth (8 -> 32 layers at one sequence
length) and sequence (64 and 128 -> 512 at 8 layers).  Held bytes are the host allocator's
after a forward, less the outputs (``FLAGS_enable_host_memory_stat=1``, set here before Paddle
is imported).  One JSON
document, also written to ``--out``.

    python benchmarks/scale_profile.py --out benchmarks/results/scale_profile_cpu.json
"""

import argparse
import gc
import json
import os

os.environ.setdefault("FLAGS_enable_host_memory_stat", "1")

import paddle  # noqa: E402
from paddle.base import core  # noqa: E402

from paddle_recompute import planner  # noqa: E402
from paddle_recompute.bench import causal_lm  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--hidden", type=int, default=64)
parser.add_argument("--budgets", default="0.8,0.5,0.3")
parser.add_argument("--out", default=None)
args = parser.parse_args()
paddle.set_device("cpu")


def llama(layers):
    return causal_lm("llama", vocab=64, hidden=args.hidden, heads=4, kv_heads=2, layers=layers,
                     positions=1024, dropout=0.0)


def ids(seq):
    return paddle.to_tensor([[(3 * i + 5 * j) % 64 for j in range(seq)] for i in range(2)], dtype="int64")


def held(model, x):
    gc.collect()
    gc.disable()
    try:
        before = core.host_memory_stat_current_value("Allocated", 0)
        loss, logits = model(input_ids=x, labels=x)[:2]
        outputs = sum(t.size * t.element_size() for t in (loss, logits))
        return core.host_memory_stat_current_value("Allocated", 0) - before - outputs
    finally:
        gc.enable()


def case(name, small, sizes, big, seq):
    profiles = [planner.profile(small, input_ids=ids(s), labels=ids(s), repeats=1) for s in sizes]
    x = ids(seq)
    scaled = planner.scale_profile(profiles, big, input_ids=x, labels=x)
    measured = planner.profile(big, input_ids=x, labels=x, repeats=1)
    held(big, x)
    row = {"case": name, "profiled_sizes": sizes, "blocks": [len(small.model.layers), len(big.model.layers)],
           "seq": seq, "scaled_total_bytes": scaled.total_bytes, "measured_total_bytes": measured.total_bytes,
           "held_without_plan": held(big, x),
           "scaled_forward_s": scaled.forward_s, "measured_forward_s": measured.forward_s,
           "block_rerun_s": [scaled.layers[scaled.blocks[1]].recompute_s,
                             measured.layers[measured.blocks[1]].recompute_s],
           "plans": []}
    for budget in map(float, args.budgets.split(",")):
        plan = planner.plan(big, input_ids=x, labels=x, budget=budget, profile=scaled)
        with plan.apply():
            h = held(big, x)
        row["plans"].append({"budget": budget, "predicted_bytes": plan.predicted_bytes, "held_bytes": h,
                             "held_over_predicted": round(h / plan.predicted_bytes, 4),
                             "regions": len(plan.choices)})
        print(f"{name}: budget {budget}: predicted {plan.predicted_bytes:,} held {h:,} "
              f"({h / plan.predicted_bytes:.4f})")
    return row


rows = [case("depth", llama(8), [32], llama(32), 32)]
model = llama(8)
rows.append(case("seq", model, [64, 128], model, 512))
doc = {"what": "plans from a scaled profile: predicted vs held bytes", "device": "cpu",
       "paddle": paddle.__version__, "hidden": args.hidden, "rows": rows}
print(json.dumps(doc))
if args.out:
    with open(args.out, "w") as fh:
        json.dump(doc, fh, indent=1)
