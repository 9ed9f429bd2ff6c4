"""Worker side of test_data_parallel.py (an importable module, as ``spawn`` needs).

Each scenario is run in both processes; results go to ``out_dir`` as ``.npy`` files, and
any exception as ``error-<scenario>-rank<r>.txt`` so the test names what failed.
"""

from __future__ import annotations

import numpy as np
import paddle
from paddle import nn

STEPS = 5
GLOBAL_BATCH = 8
WIDTH = 8
LR = 0.1


class Net(nn.Layer):
    """An MLP without dropout; ``layout`` picks where the recompute regions are.

    ``"block"``: one region around a sublayer.  ``"shared_layer"``: one Linear used in two
    regions (each a Layer call).  ``"shared_closure"``: the same, through closures.
    """

    def __init__(self, layout: str, mode):
        super().__init__()
        self.inp = nn.Linear(WIDTH, 16)
        self.block = nn.Sequential(nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 16), nn.GELU())
        self.shared = nn.Linear(16, 16)
        self.out = nn.Linear(16, 4)
        self.layout = layout
        self.mode = mode  # None: no recompute; else use_reentrant

    def region(self, fn, h):
        if self.mode is None:
            return fn(h)
        from paddle_recompute import recompute

        return recompute(fn, h, use_reentrant=self.mode)

    def forward(self, x):
        h = paddle.tanh(self.inp(x))
        h = self.region(self.block, h)
        if self.layout == "shared_layer":
            h = self.region(self.shared, h)
            h = self.region(self.shared, paddle.tanh(h))
        elif self.layout == "shared_closure":
            h = self.region(lambda t: paddle.tanh(self.shared(t)), h)
            h = self.region(lambda t: paddle.sin(self.shared(t)), h)
        return self.out(h)


def global_batches():
    rs = np.random.RandomState(123)
    return [rs.standard_normal((GLOBAL_BATCH, WIDTH)).astype("float32") for _ in range(STEPS)]


def train(layout: str, mode, rank: int | None, world: int = 1, data_parallel: bool = False):
    """``STEPS`` SGD steps on this rank's share of each global batch; returns parameters."""
    paddle.seed(2024)
    model = Net(layout, mode)
    opt = paddle.optimizer.SGD(learning_rate=LR, parameters=model.parameters())
    runner = paddle.DataParallel(model) if data_parallel else model
    share = GLOBAL_BATCH // world
    for batch in global_batches():
        local = batch if rank is None else batch[rank * share:(rank + 1) * share]
        out = runner(paddle.to_tensor(local))
        # Mean over the local batch; DataParallel averages the gradients over ranks, so
        # the update is that of the mean over the global batch.
        loss = (out**2).sum(axis=-1).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
    return {name: p.numpy() for name, p in model.named_parameters()}


def tracker_grads(use_recompute, mode, rank):
    """Dropout under the fleet tracker's per-rank stream; gradients of one step."""
    from paddle.distributed.fleet.layers.mpu.random import get_rng_state_tracker

    tracker = get_rng_state_tracker()
    tracker.reset()
    tracker.add("local_seed", 1000 + rank)
    paddle.seed(7)  # the same global stream on every rank
    lin1, lin2 = nn.Linear(WIDTH, 32), nn.Linear(32, 4)
    dropout = nn.Dropout(0.5)

    def body(x):
        h = lin1(x)
        with tracker.rng_state("local_seed"):
            h = dropout(h)
        return lin2(paddle.tanh(h))

    x = paddle.to_tensor(global_batches()[0])
    x.stop_gradient = False
    if use_recompute:
        from paddle_recompute import recompute

        out = recompute(body, x, use_reentrant=mode)
    else:
        out = body(x)
    (out**2).sum().backward()
    with tracker.rng_state("local_seed"):
        next_draw = paddle.rand([4]).numpy()  # the stream goes on where the forward left it
    tracker.reset()
    return {"x": x.grad.numpy(), "w1": lin1.weight.grad.numpy(), "w2": lin2.weight.grad.numpy(),
            "next": next_draw}


def worker(out_dir: str) -> None:
    import _spawn
    import paddle.distributed as dist

    dist.init_parallel_env()
    rank, world = dist.get_rank(), dist.get_world_size()
    scenarios = []
    for mode, tag in ((True, "reentrant"), (False, "non_reentrant")):
        scenarios.append((f"tracker-{tag}-recompute", lambda mode=mode: tracker_grads(True, mode, rank)))
        scenarios.append((f"tracker-{tag}-plain", lambda mode=mode: tracker_grads(False, mode, rank)))
    for layout in ("block", "shared_layer", "shared_closure"):
        for mode, tag in ((None, "plain"), (True, "reentrant"), (False, "non_reentrant")):
            if (layout, mode) != ("shared_closure", True):
                scenarios.append((f"dp-{layout}-{tag}",
                                  lambda layout=layout, mode=mode: train(layout, mode, rank, world, True)))
    # Last: a reentrant region around closures that share a parameter, expected to fail
    # with a clear error on both ranks alike (so neither waits on the other).
    scenarios.append(("dp-shared_closure-reentrant",
                      lambda: train("shared_closure", True, rank, world, True)))
    _spawn.run_scenarios(out_dir, scenarios, may_fail={"dp-shared_closure-reentrant"},
                         keep=lambda name: name.startswith("tracker") or rank == 0)
