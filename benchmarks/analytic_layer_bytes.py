"""How far the analytic activation count of a transformer layer (Korthikanti et al. 2022,
``s*b*h*(34 + 5*a*s/h)``) is from what PaddleFormers' layers save, measured by the profiler.

For each family and size, a tiny model (float32, no dropout, unfused RMSNorm, eager
attention, intermediate size 2x hidden) is profiled and a middle decoder layer's saved
bytes are compared with the raw formula (16-bit, dropout, GeLU MLP of 4x hidden), the raw
formula in float32 (twice the bytes), and the count adapted to the layer
(``planner.transformer_layer_bytes``: float32, no dropout, grouped-query attention, a
SwiGLU MLP of the model's inner size), and that count with what the eager layers save beyond
the paper's list (``norm="rmsnorm"``, ``rope=True``, ``repeat_kv=True``).  One JSON
document, also written to ``--out``.

    python benchmarks/analytic_layer_bytes.py --out benchmarks/results/analytic_layer_bytes_cpu.json
"""

import argparse
import json

import paddle

from paddle_recompute import planner
from paddle_recompute.bench import causal_lm

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--families", default="llama,ernie4_5,phi3")
parser.add_argument("--hidden", default="64,128")
parser.add_argument("--seq", default="128,256")
parser.add_argument("--batch", type=int, default=2)
parser.add_argument("--heads", type=int, default=4)
parser.add_argument("--kv-heads", type=int, default=2)
parser.add_argument("--out", default=None)
args = parser.parse_args()

paddle.set_device("cpu")
rows = []
for family in args.families.split(","):
    for hidden in map(int, args.hidden.split(",")):
        model = causal_lm(family, vocab=64, hidden=hidden, heads=args.heads, kv_heads=args.kv_heads,
                          layers=3, positions=1024, dropout=0.0)
        for seq in map(int, args.seq.split(",")):
            ids = paddle.randint(0, 64, [args.batch, seq])
            prof = planner.profile(model, input_ids=ids, labels=ids, repeats=1)
            measured = prof.layers[prof.blocks[1]].saved_bytes  # a middle layer
            sizes = dict(seq=seq, batch=args.batch, hidden=hidden, heads=args.heads)
            raw = planner.korthikanti_bytes(**sizes)
            adapted = planner.transformer_layer_bytes(
                **sizes, kv_heads=args.kv_heads, intermediate=2 * hidden, mlp="swiglu",
                dropout=False, element_bytes=4)
            eager = planner.transformer_layer_bytes(
                **sizes, kv_heads=args.kv_heads, intermediate=2 * hidden, mlp="swiglu",
                dropout=False, element_bytes=4, norm="rmsnorm", rope=True, repeat_kv=True)
            rows.append({"family": family, **sizes, "kv_heads": args.kv_heads,
                         "measured_bytes": measured, "raw_bytes": raw, "raw_fp32_bytes": 2 * raw,
                         "adapted_bytes": adapted, "eager_bytes": eager,
                         **{f"{k}_over_measured": round(v / measured, 4) for k, v in
                            (("raw", raw), ("raw_fp32", 2 * raw), ("adapted", adapted), ("eager", eager))}})
            r = rows[-1]
            print(f"{family:9} h={hidden:4} s={seq:4}: measured {measured:>10,}"
                  + "".join(f"  {k} x{r[k + '_over_measured']}"
                            for k in ("raw", "raw_fp32", "adapted", "eager")))
doc = {"what": "a middle decoder layer's saved bytes vs the analytic count", "device": "cpu",
       "paddle": paddle.__version__, "rows": rows}
print(json.dumps(doc))
if args.out:
    with open(args.out, "w") as fh:
        json.dump(doc, fh, indent=1)
