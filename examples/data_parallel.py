"""Data parallel training with recompute: ``paddle.DataParallel`` over two CPU processes (gloo).

Each process trains on its half of every batch; ``DataParallel`` averages the gradients.
Every worker trains twice from the same seeds, without and with recompute of every
residual block, and asserts that losses and final parameters are bit-for-bit identical:
recompute changes nothing across processes either.

    python examples/data_parallel.py [--nprocs 2 --steps 3 --blocks 4 --hidden 64 --batch 16]
"""

from __future__ import annotations

import argparse

import numpy as np
import paddle
import paddle.distributed as dist

from paddle_recompute import recompute

# the residual MLP that `paddle-recompute bench --model mlp` measures
from paddle_recompute._bench.mlp import MLP, MLPConfig, mlp_batch, mlp_loss


def runner(use_recompute: bool, use_reentrant: bool):
    """Every block through ``recompute``, or none."""
    if not use_recompute:
        return lambda block, x: block(x)
    return lambda block, x: recompute(block, x, use_reentrant=use_reentrant)


def train(cfg: MLPConfig, steps: int, use_recompute: bool, use_reentrant: bool) -> tuple[list, dict]:
    """This rank's losses and the final parameters of one data-parallel run."""
    rank, world = dist.get_rank(), dist.get_world_size()
    paddle.seed(0)
    model = paddle.DataParallel(MLP(cfg, runner(use_recompute, use_reentrant)))
    optimizer = paddle.optimizer.SGD(0.05, parameters=model.parameters())
    share = cfg.batch // world
    losses = []
    for step in range(steps):
        x, y = mlp_batch(cfg, step)
        paddle.seed(1000 * step + rank)  # dropout differs per rank, equal across the two runs
        loss = mlp_loss(model(x[rank * share:(rank + 1) * share]), y[rank * share:(rank + 1) * share])
        loss.backward()
        optimizer.step()
        optimizer.clear_grad()
        losses.append(float(loss))
    return losses, {name: p.numpy() for name, p in model.named_parameters()}


def worker(cfg: MLPConfig, steps: int, use_reentrant: bool) -> None:
    """Runs in each spawned process."""
    dist.init_parallel_env()
    reference, ref_params = train(cfg, steps, use_recompute=False, use_reentrant=use_reentrant)
    losses, params = train(cfg, steps, use_recompute=True, use_reentrant=use_reentrant)
    np.testing.assert_array_equal(losses, reference)
    for name, value in ref_params.items():
        np.testing.assert_array_equal(params[name], value, err_msg=name)
    print(f"rank {dist.get_rank()}: losses {' '.join(f'{v:.6f}' for v in losses)} -- equal to no "
          f"recompute, as are all {len(params)} parameters", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nprocs", type=int, default=2)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--blocks", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--batch", type=int, default=16, help="global batch, split over the processes")
    parser.add_argument("--non-reentrant", action="store_true", help="use_reentrant=False")
    args = parser.parse_args(argv)
    cfg = MLPConfig(hidden=args.hidden, blocks=args.blocks, batch=args.batch)
    dist.spawn(worker, args=(cfg, args.steps, not args.non_reentrant), nprocs=args.nprocs, backend="gloo")
    print(f"{args.nprocs} processes, DataParallel with recompute: bit-for-bit equal to no recompute")


if __name__ == "__main__":
    main()
