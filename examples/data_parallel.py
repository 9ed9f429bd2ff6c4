"""Data parallel training with recompute: ``paddle.DataParallel`` over two CPU processes (gloo).

What it shows: each process trains on its half of one fixed global batch (which the
residual MLP learns, so the loss falls); ``DataParallel`` averages the gradients.  Every
worker trains twice from the same seeds, without and with recompute of every residual
block, and asserts that its losses and final parameters are bit-for-bit identical:
recompute changes nothing across processes either.  ``paddle.distributed.spawn`` starts the
processes; nothing else is needed (Paddle's CPU build uses gloo).

    python examples/data_parallel.py [--nprocs 2 --steps 5 --blocks 4 --hidden 64 --batch 16]

Output: one line per step with the loss averaged over the processes (falling), then a line
saying that on every process losses and parameters equal training without recompute.  A
difference on any process stops the run with that process's ``AssertionError``.
"""

from __future__ import annotations

import argparse

import numpy as np
import paddle
import paddle.distributed as dist

from paddle_recompute import recompute

# the residual MLP that `paddle-recompute bench --model mlp` measures
from paddle_recompute.bench import MLP, MLPConfig, mlp_batch, mlp_loss


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
    x, y = mlp_batch(cfg, 0)  # one global batch, reused every step: the model can fit it
    losses = []
    for step in range(steps):
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
    mean = paddle.to_tensor(losses)
    dist.all_reduce(mean)  # every rank has checked its own run; the mean is the global loss
    if dist.get_rank() == 0:
        for step, loss in enumerate(mean.numpy() / dist.get_world_size()):
            print(f"step {step}  loss {loss:.6f} (mean over {dist.get_world_size()} processes)")
        print(f"every process: losses and all {len(params)} parameters equal to no recompute", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nprocs", type=int, default=2)
    parser.add_argument("--steps", type=int, default=5)
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
