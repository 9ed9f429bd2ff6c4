"""Worker side of test_param_attributes_dp.py: ``DataParallel.no_sync()`` gradient
accumulation with regions, two CPU processes over gloo.

Each step runs ``MICRO`` micro-batches: all but the last under ``no_sync()`` (gradients
accumulate locally), the last synchronised (the reducer all-reduces the sum).  The model
holds a GradAddLinear-shaped PyLayer (``.grad`` in place when there is one) beside
plain Linears.  Every scenario saves this rank's gradients before each step, losses and
parameters after.
"""

from __future__ import annotations

import contextlib

import numpy as np
import paddle
from paddle import nn

STEPS, MICRO, WIDTH = 3, 2, 6


class GradAddLinear(paddle.autograd.PyLayer):
    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        return paddle.matmul(x, weight)

    @staticmethod
    def backward(ctx, dy):
        x, weight = ctx.saved_tensor()
        dx = paddle.matmul(dy, weight, transpose_y=True)
        dw = paddle.matmul(x, dy, transpose_x=True)
        if weight.grad is not None:
            weight.grad.add_(dw)
            return dx, None
        return dx, dw


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(WIDTH, WIDTH)
        self.w = self.create_parameter([WIDTH, WIDTH])

    def forward(self, x):
        return x + paddle.tanh(GradAddLinear.apply(paddle.tanh(self.fc(x)), self.w))


class Net(nn.Layer):
    def __init__(self, mode):
        super().__init__()
        self.inp = nn.Linear(WIDTH, WIDTH)
        self.blocks = nn.LayerList([Block(), Block()])
        self.head = nn.Linear(WIDTH, 1)
        self.mode = mode

    def forward(self, x):
        from paddle_recompute import recompute

        h = self.inp(x)
        for block in self.blocks:
            h = block(h) if self.mode is None else recompute(block, h, use_reentrant=self.mode)
        return self.head(h)


def train(mode, rank: int) -> dict:
    paddle.seed(2024)
    model = Net(mode)
    runner = paddle.DataParallel(model)
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    rs = np.random.RandomState(10 + rank)  # each rank its own data
    losses, grads = [], {}
    for _ in range(STEPS):
        for micro in range(MICRO):
            sync = micro == MICRO - 1
            with contextlib.nullcontext() if sync else runner.no_sync():
                x = paddle.to_tensor(rs.standard_normal((4, WIDTH)).astype("float32"))
                loss = (runner(x) ** 2).mean()
                loss.backward()
            losses.append(loss.numpy())
        for name, p in model.named_parameters():
            grads.setdefault(name, []).append(p.grad.numpy().copy())
        opt.step()
        opt.clear_grad()
    result = {f"grad.{name}": np.stack(g) for name, g in grads.items()}
    result.update({f"param.{name}": p.numpy() for name, p in model.named_parameters()})
    result["losses"] = np.stack(losses)
    return result


def worker(out_dir: str) -> None:
    import _spawn
    import paddle.distributed as dist

    dist.init_parallel_env()
    rank = dist.get_rank()
    _spawn.run_scenarios(out_dir, [(tag, lambda mode=mode: train(mode, rank)) for mode, tag in
                                   ((None, "plain"), (True, "reentrant"), (False, "non_reentrant"))])
