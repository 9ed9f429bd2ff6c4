"""Tensor parallel training with ``recompute_hybrid``: fleet, mp_degree 2, two processes.

What it shows: a model whose blocks are split over two model-parallel ranks
(``ColumnParallelLinear`` then ``RowParallelLinear``, dropout on the model-parallel RNG
stream of ``get_rng_state_tracker()``) runs each block through
``recompute_hybrid(ctx, block, h)`` with ``partition=True``: each rank keeps only its half of
the block's input until backward, and all-gathers it there to rerun the block.  The model
learns one fixed batch, so the loss falls.  Every rank trains twice from the same seeds,
without and with ``recompute_hybrid``, and asserts that its losses and its shard of every
parameter are bit-for-bit identical, and that every block ran twice per step (forward, and
again in backward).

    python examples/hybrid_parallel.py [--steps 5 --width 16 --hidden 64 --blocks 2]
    python -m paddle.distributed.launch --nproc_per_node 2 examples/hybrid_parallel.py

It runs on a CPU build of Paddle, in two processes over gloo (started by
``paddle.distributed.spawn``, or by Paddle's launcher), and only with a TEST-ONLY PROCESS
SETUP: Paddle 3.3.1's CPU build cannot run fleet tensor parallel as shipped (its
``*_on_calc_stream`` collectives are missing for gloo, ``c_identity`` has no CPU kernel and
the device id is unset).  Each worker process borrows ``tests/_fleet_cpu.py`` from this
repository, which patches those three things in that process only; the library itself is
unchanged.  Do not copy that setup into training code.  On two GPUs no such setup is
needed, and the launch command would be
``python -m paddle.distributed.launch --gpus 0,1 examples/hybrid_parallel.py``; that path
has not been run in this project (no multi-GPU machine).

Output: one line per step with the loss (the same on both ranks, falling), then a line
saying that on every rank losses and parameter shards equal training without recompute.
A difference on any rank stops the run with that rank's ``AssertionError``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np
import paddle
import paddle.distributed as dist
import paddle.nn.functional as F
from paddle import nn
from paddle.distributed import fleet

from paddle_recompute import recompute_hybrid

MP_DEGREE = 2


class Block(nn.Layer):
    """x + RowParallel(Dropout(GELU(ColumnParallel(LayerNorm(x))))), split over the mp ranks."""

    def __init__(self, width: int, hidden: int):
        super().__init__()
        from paddle.distributed.fleet.meta_parallel import ColumnParallelLinear, RowParallelLinear

        self.norm = nn.LayerNorm(width)
        self.up = ColumnParallelLinear(width, hidden, has_bias=True, gather_output=False)
        self.down = RowParallelLinear(hidden, width, has_bias=True, input_is_parallel=True)
        # forward runs (a recomputed block runs again in backward), in a list written in place:
        # a rerun puts back the attributes a forward reassigns (``self.calls += 1``)
        self.calls = [0]

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        from paddle.distributed.fleet.meta_parallel import get_rng_state_tracker

        self.calls[0] += 1
        h = F.gelu(self.up(self.norm(x)))
        with get_rng_state_tracker().rng_state():  # each rank drops from its own slice
            h = F.dropout(h, 0.1)
        return x + self.down(h)


class Net(nn.Layer):
    """A replicated stem, the tensor-parallel blocks (each through ``region``), a replicated head."""

    def __init__(self, args, region):
        super().__init__()
        self.stem = nn.Linear(args.width, args.width)
        self.blocks = nn.LayerList([Block(args.width, args.hidden) for _ in range(args.blocks)])
        self.head = nn.Linear(args.width, args.classes)
        self.region = region

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        h = self.stem(x)
        for block in self.blocks:
            h = self.region(block, h)
        return self.head(h)


def train(args, region) -> tuple[list[float], dict, list[int]]:
    """AdamW on one fixed batch from fixed seeds; losses, this rank's parameters, block calls."""
    from paddle.distributed.fleet.meta_parallel import model_parallel_random_seed

    model_parallel_random_seed(2024)  # replicated layers equal on both ranks, mp streams differ
    model = Net(args, region)
    optimizer = paddle.optimizer.AdamW(1e-2, parameters=model.parameters())
    rng = np.random.default_rng(0)  # one batch, reused every step: the model can fit it
    x = paddle.to_tensor(rng.standard_normal((args.batch, args.width)).astype("float32"))
    y = paddle.to_tensor(rng.integers(0, args.classes, (args.batch,)))
    losses = []
    for _ in range(args.steps):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.clear_grad()
        losses.append(float(loss))
    params = {name: p.numpy() for name, p in model.named_parameters()}
    return losses, params, [block.calls[0] for block in model.blocks]


def test_only_cpu_setup() -> None:
    """TEST-ONLY: let fleet tensor parallel run on Paddle's CPU build (see the docstring)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import _fleet_cpu

    _fleet_cpu.install()


def worker(args) -> None:
    """Runs in each process."""
    if not paddle.is_compiled_with_cuda():
        test_only_cpu_setup()
    strategy = fleet.DistributedStrategy()
    strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": MP_DEGREE, "pp_degree": 1}
    fleet.init(is_collective=True, strategy=strategy)
    ctx = {"mp_group": fleet.get_hybrid_communicate_group().get_model_parallel_group(),
           "partition": True}  # keep 1/mp of each block input until backward

    reference, ref_params, ref_calls = train(args, lambda block, h: block(h))
    losses, params, calls = train(args, lambda block, h: recompute_hybrid(ctx, block, h))
    np.testing.assert_array_equal(losses, reference)
    for name, value in ref_params.items():
        np.testing.assert_array_equal(params[name], value, err_msg=name)
    assert calls == [2 * c for c in ref_calls] == [2 * args.steps] * args.blocks, (calls, ref_calls)
    if dist.get_rank() == 0:
        for step, loss in enumerate(losses):
            print(f"step {step}  loss {loss:.6f} with recompute_hybrid, {reference[step]:.6f} without")
        print(f"every rank: losses and its shards of all {len(params)} parameters equal to no recompute; "
              "each block ran twice a step", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--blocks", type=int, default=2)
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--hidden", type=int, default=64, help="the split dimension; divisible by 2")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--classes", type=int, default=4)
    args = parser.parse_args(argv)
    if "PADDLE_TRAINER_ID" in os.environ:  # started by paddle.distributed.launch: this is a worker
        worker(args)
        return
    if paddle.is_compiled_with_cuda():
        raise SystemExit("on GPUs, start this example with "
                         "`python -m paddle.distributed.launch --gpus 0,1 examples/hybrid_parallel.py`")
    dist.spawn(worker, args=(args,), nprocs=MP_DEGREE, backend="gloo")
    print(f"{MP_DEGREE} processes, tensor parallel with recompute_hybrid: bit-for-bit equal to no recompute")


if __name__ == "__main__":
    main()
