"""What a thread without regions pays while another thread has a region open.

While any thread has a region, Paddle's single hook slot holds recompute's dispatching
pair, so every tensor any thread saves goes through it (NOTE [ Threads ] in
_core/hooks.py; a frameless thread's save is kept as plain Paddle keeps it); ``bench.hook_slot``
shows who holds the slot.
Measured side by side in interleaved rounds, in the main thread, which has no region:

- per saved tensor: a chain of ``y = y * w`` (each multiply saves two tensors), forward
  and backward, divided by the number of tensors saved;
- a small training step: a 4-block MLP, forward, backward and SGD update;

once with no other thread, once while a helper thread sits inside an open region.

    python benchmarks/thread_cost.py --rounds 30 --json benchmarks/results/thread_cost_cpu.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time

import paddle
from paddle import nn

import paddle_recompute as pr
from paddle_recompute import bench

CHAIN = 200


class _OtherThreadInARegion:
    """A helper thread whose region stays open until ``close``."""

    def __enter__(self):
        self.opened, self.release = threading.Event(), threading.Event()
        x = paddle.ones([4])
        x.stop_gradient = False

        def body(h):
            self.opened.set()
            self.release.wait()
            return h * 2

        self.thread = threading.Thread(target=lambda: pr.recompute(body, x, use_reentrant=False))
        self.thread.start()
        self.opened.wait()
        slot = bench.hook_slot()
        assert slot.installed and not slot.thread_frames
        return self

    def __exit__(self, *exc):
        self.release.set()
        self.thread.join()
        assert bench.release_hook_slot()


def _chain(x, w):
    y = x
    for _ in range(CHAIN):
        y = y * w
    return y


def _saves(step) -> int:
    """Tensors ``step`` saves for backward."""
    count = []
    with pr.saved_tensors_hooks(lambda t: count.append(1) or t, lambda t: t):
        step()
    return len(count)


def _time(fn, repeat) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--json")
    args = parser.parse_args()

    x = paddle.randn([64])
    x.stop_gradient = False
    w = paddle.full([64], 1.0001)
    w.stop_gradient = False

    paddle.seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256))
                            for _ in range(4)])
    opt = paddle.optimizer.SGD(learning_rate=1e-4, parameters=model.parameters())
    batch = paddle.randn([64, 256])

    def chain_step():
        _chain(x, w).sum().backward()

    def train_step():
        (model(batch) ** 2).mean().backward()
        opt.step()
        opt.clear_grad()

    rows = {"chain": {"alone": [], "other thread in a region": []},
            "step": {"alone": [], "other thread in a region": []}}
    saves, step_saves = _saves(chain_step), _saves(train_step)
    for _ in range(2):  # warm-up
        chain_step()
        train_step()
    for r in range(args.rounds):
        for condition in (("alone", "other thread in a region") if r % 2 == 0
                          else ("other thread in a region", "alone")):
            if condition == "alone":
                assert not bench.hook_slot().installed
                rows["chain"][condition].append(_time(chain_step, 5))
                rows["step"][condition].append(_time(train_step, 3))
            else:
                with _OtherThreadInARegion():
                    rows["chain"][condition].append(_time(chain_step, 5))
                    rows["step"][condition].append(_time(train_step, 3))
    med = {k: {c: statistics.median(v) for c, v in d.items()} for k, d in rows.items()}
    chain_extra = med["chain"]["other thread in a region"] - med["chain"]["alone"]
    result = {
        "rounds": args.rounds,
        "saved_tensors_per_chain": saves,
        "chain_ms": {c: round(v * 1e3, 3) for c, v in med["chain"].items()},
        "extra_us_per_saved_tensor": round(chain_extra / saves * 1e6, 2),
        "mlp_step_ms": {c: round(v * 1e3, 2) for c, v in med["step"].items()},
        "saved_tensors_per_mlp_step": step_saves,
        "mlp_step_extra_ms_from_per_tensor_cost": round(step_saves * chain_extra / saves * 1e3, 3),
        "mlp_step_ratio": round(med["step"]["other thread in a region"] / med["step"]["alone"], 3),
    }
    print(json.dumps(result, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
