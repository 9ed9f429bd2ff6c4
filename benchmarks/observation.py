"""What observing operators costs: a region that keeps everything against no recompute.

A selective region (``recompute(..., policy=...)``, the planner's policy and operator-level
options) sends every operator call of its forward through Python to number it and ask the
policy (NOTE [ Selective recompute ]).  With ``policies.save_all`` nothing is recomputed,
so what the step pays beyond no recompute is the observation alone.

On PaddleFormers' Llama (the frontier benchmark's model: 4 layers, hidden 512, seq 256,
batch 4, CPU) every decoder layer is a ``save_all`` region.  Two measures:

  * the step (forward + loss + backward) against no recompute: rounds interleaved in pairs
    (ABBA order), the median of the per-round ratios and the ratio of the medians;
  * the accounting: operators observed per step (counted) times the cost of observing one
    (a chain of small ``linear``/``scale``/``tanh`` calls in a ``save_all`` region against
    the same chain unwrapped, medians), over no recompute's step.  It does not drift with
    the machine's load as the step's ratio does.

Each step is timed in two phases, forward (with the loss) and backward, so a cost shows
where it is paid: the observing Python runs in the forward, and a region that held more
than the plain step would show in the backward's allocations.  The verdict on the bound
takes the noise into account: besides the median of the paired ratios it gives a one-sided
95% upper confidence bound for it (distribution-free: the order statistic that the sign
test of the planner's final duel, ``final_choice.duel_wins``, puts there), and says the
bound is met only when that upper bound is within 1.5%.

Times are this process's CPU time (``frontier.py``'s ``--clock cpu``): on the shared machine
the wall clock is mostly waiting for other processes.  Per step it also reports the minor
page faults and the user and system CPU seconds (``getrusage``): a region that holds
tensors longer than the plain step makes glibc's malloc map fresh pages (8 MiB buffers are
mapped and unmapped per allocation unless a freed chunk fits).  Two such holds were found
and removed: Paddle keeps what a pack hook returned until the graph dies, so kept slots
now let go once unpacked (NOTE [ Plain saves ]); and a ``save_all`` region held every
output of a layer to the end of its forward, where the plain forward frees what backward
does not save at once (NOTE [ Kept outputs let go ]).  ``MALLOC_MMAP_THRESHOLD_`` /
``MALLOC_TRIM_THRESHOLD_`` in the environment (glibc: keep freed memory for reuse) are
recorded in the JSON.

    python benchmarks/observation.py [--rounds 10] [--hidden 512 --seq 256 ...] [--json out.json]
    python benchmarks/observation.py --processes 8 --rounds 10 [--json out.json]

Runs of the same code differ by about 1% between processes, more than one run's rounds
suggest; ``--processes N`` runs N fresh processes one after the other and judges the bound on
their medians (the same sign-test bound, across processes).
"""

from __future__ import annotations

import functools
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("FLAGS_enable_host_memory_stat", "1")  # before Paddle is imported
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's package

import frontier  # noqa: E402  (this directory: the Llama subject and its step)
import paddle  # noqa: E402

from paddle_recompute import policies, recompute  # noqa: E402
from paddle_recompute.bench import HostMemory, duel_wins, measured_regions  # noqa: E402

CHAIN = 100  # (linear, scale, tanh) triples in the per-operator measurement
BOUND = 1.015  # the bound: a region that keeps everything costs at most 1.5% more


def observed_ops(subject: frontier.Subject) -> int:
    """Operator calls the ``save_all`` regions observe in one forward (each region's records)."""
    undo = frontier._policy(subject, policies.save_all)
    try:
        with measured_regions() as finished:
            subject.loss(subject.tokens)
    finally:
        undo()
    assert len(finished) == len(subject.blocks), len(finished)  # every layer was a region
    return sum(len(frame.ops) for frame in finished)


def per_op_seconds(rounds: int) -> float:
    """Seconds observing one operator call costs (forward and backward of a save_all region)."""
    x = paddle.randn([4, 8])
    x.stop_gradient = False
    w = paddle.create_parameter([8, 8], "float32")

    def chain(h):
        for _ in range(CHAIN):
            h = paddle.tanh(paddle.nn.functional.linear(h, w) * 0.5)
        return h

    modes = {"plain": lambda: chain(x).sum().backward(),
             "save_all": lambda: recompute(chain, x, use_reentrant=False,
                                           policy=policies.save_all).sum().backward()}
    times = {m: [] for m in modes}
    for r in range(rounds + 3):
        for m in (list(modes) if r % 2 else list(modes)[::-1]):
            start = time.process_time()
            modes[m]()
            if r >= 3:
                times[m].append(time.process_time() - start)
    return (statistics.median(times["save_all"]) - statistics.median(times["plain"])) / (3 * CHAIN)


def upper_bound(ratios: list[float], alpha: float = 0.05) -> float:
    """One-sided ``1 - alpha`` upper confidence bound for the median of ``ratios``: the
    order statistic below which fewer than ``duel_wins`` of them fall with probability at
    most ``alpha`` (a sign test; nothing assumed of the distribution).  Infinite when there
    are too few rounds to bound it."""
    k = duel_wins(len(ratios), alpha)
    return sorted(ratios)[k - 1] if k <= len(ratios) else float("inf")


def _modes(subject: frontier.Subject) -> dict:
    """Each mode's installer, which returns its undo: no recompute, and every layer a
    ``save_all`` region."""
    return {"none": lambda: (lambda: None),
            "save_all": functools.partial(frontier._policy, subject, policies.save_all)}


def run_rounds(subject: frontier.Subject, rounds: int) -> tuple[dict, dict]:
    """Per mode, the (forward, backward) CPU seconds and the getrusage deltas of each round."""
    modes = _modes(subject)
    times: dict = {m: [] for m in modes}
    usage: dict = {m: [] for m in modes}  # per step: minor page faults, user s, system s
    for r in range(rounds + 1):  # round 0 warms up
        for m in (list(modes) if r % 2 else list(modes)[::-1]):
            undo = modes[m]()
            before = resource.getrusage(resource.RUSAGE_SELF)
            frontier._step(subject)
            after = resource.getrusage(resource.RUSAGE_SELF)
            undo()
            if r:
                times[m].append(frontier._step.phases)
                usage[m].append((after.ru_minflt - before.ru_minflt, after.ru_utime - before.ru_utime,
                                 after.ru_stime - before.ru_stime))
    return times, usage


def held_after_forward(subject: frontier.Subject) -> dict:
    """Bytes each mode holds once the timed step's forward (with the loss) has returned, by
    Paddle's host allocator: a region that holds more than the plain step shows here."""
    held, memory = {}, HostMemory()
    for mode, install in _modes(subject).items():
        undo = install()
        try:
            gc.collect()
            paddle.seed(1)
            before = memory.current()
            loss = subject.loss(subject.tokens)
            held[mode] = memory.current() - before
            loss.backward()
            subject.model.clear_gradients()
        finally:
            undo()
    return held


def _paired(times: dict, phase) -> list[float]:
    return [phase(s) / phase(n) for n, s in zip(times["none"], times["save_all"], strict=True)]


def summary(times: dict, usage: dict) -> dict:
    step, forward, backward = sum, (lambda t: t[0]), (lambda t: t[1])
    paired = _paired(times, step)
    med = {m: statistics.median(step(t) for t in ts) for m, ts in times.items()}
    return {"rounds": len(paired), "none_ms": 1e3 * med["none"], "save_all_ms": 1e3 * med["save_all"],
            "ratio_of_medians": med["save_all"] / med["none"],
            "median_paired_ratio": statistics.median(paired), "paired_ratios": paired,
            "paired_ratio_upper95": upper_bound(paired), "bound": BOUND,
            "bound_met": upper_bound(paired) <= BOUND,
            "phases": {name: {"none_ms": 1e3 * statistics.median(phase(t) for t in times["none"]),
                              "save_all_ms": 1e3 * statistics.median(phase(t) for t in times["save_all"]),
                              "median_paired_ratio": statistics.median(_paired(times, phase))}
                       for name, phase in (("forward", forward), ("backward", backward))},
            "usage": {m: {"minor_faults": statistics.median(u[0] for u in us),
                          "user_s": statistics.median(u[1] for u in us),
                          "system_s": statistics.median(u[2] for u in us)} for m, us in usage.items()}}


def report(result: dict) -> None:
    print(f"none {result['none_ms']:.0f} ms, save_all {result['save_all_ms']:.0f} ms: "
          f"ratio of medians {result['ratio_of_medians']:.4f}, median paired ratio "
          f"{result['median_paired_ratio']:.4f} ({result['rounds']} rounds)")
    met = "met" if result["bound_met"] else "not shown"
    print(f"95% upper bound of the median paired ratio {result['paired_ratio_upper95']:.4f}: "
          f"the {result['bound']:.3f} bound is {met}")
    for name, p in result["phases"].items():
        print(f"{name}: none {p['none_ms']:.0f} ms, save_all {p['save_all_ms']:.0f} ms, "
              f"median paired ratio {p['median_paired_ratio']:.4f}")
    print(f"{result['observed_ops']} operators observed per step x {result['per_op_us']:.1f} us = "
          f"{result['observed_ops'] * result['per_op_us'] / 1e3:.1f} ms: "
          f"{result['accounted_ratio']:.4f}x of no recompute's step")
    for m, u in result["usage"].items():
        print(f"{m}: {u['minor_faults']:.0f} minor page faults, user {u['user_s']:.3f} s, "
              f"system {u['system_s']:.3f} s per step (medians)")
    held = result["held_after_forward"]
    print(f"held after the forward: none {held['none'] / 2**20:.2f} MiB, "
          f"save_all {held['save_all'] / 2**20:.2f} MiB")


def across_processes(args) -> dict:
    """``--processes N``: this script run N times, each a fresh process (its own layout of
    buffers, which moves a run's ratio by about 1%), and the bound judged on their medians."""
    medians = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.processes):
            out = Path(tmp) / f"run{i}.json"
            command = [sys.executable, __file__, "--rounds", str(args.rounds), "--json", str(out),
                       *(f"--{k}={getattr(args, k)}" for k in ("hidden", "seq", "blocks", "batch"))]
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
            medians.append(json.loads(out.read_text())["median_paired_ratio"])
            print(f"process {i + 1}: median paired ratio {medians[-1]:.4f}", flush=True)
    upper = upper_bound(medians)
    return {"processes": args.processes, "rounds": args.rounds, "process_medians": medians,
            "median_of_processes": statistics.median(medians), "processes_upper95": upper,
            "bound": BOUND, "bound_met": upper <= BOUND, "load_average": os.getloadavg()}


def main() -> None:
    args = frontier.llama_arguments(__doc__, "rounds", 10, more=(("processes", 1),))
    if args.processes > 1:  # the processes build their own Llama
        result = across_processes(args)
        met = "met" if result["bound_met"] else "not shown"
        print(f"median of {args.processes} processes' medians {result['median_of_processes']:.4f}; "
              f"95% upper bound {result['processes_upper95']:.4f}: the {BOUND:.3f} bound is {met}")
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=1))
        return
    subject = frontier.llama_subject(args)
    result = summary(*run_rounds(subject, args.rounds))
    ops, per_op = observed_ops(subject), per_op_seconds(max(args.rounds, 3))
    result.update(observed_ops=ops, per_op_us=1e6 * per_op, held_after_forward=held_after_forward(subject),
                  accounted_ratio=1 + ops * per_op / (result["none_ms"] / 1e3),
                  load_average=os.getloadavg(),
                  malloc_env={k: v for k, v in os.environ.items() if k.startswith("MALLOC_")})
    report(result)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
