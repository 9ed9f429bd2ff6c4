"""Worker side of test_hybrid_parallel.py's pipeline and sharding tests (two CPU processes
over gloo; see ``_fleet_cpu`` for the test-only process setup).

``pipeline_worker``: ``PipelineLayer`` over two stages, trained with ``train_batch`` (two
micro-batches a step), its stages passing ``(hidden, mask)``; ``recompute_interval`` 0
against 1 with ``patch_paddle()`` (so Paddle's ``pp_layers`` calls our ``recompute_hybrid``).
``sharding_worker``: sharding stage 1 (``DygraphShardingOptimizer``) with and without
recompute.
"""

from __future__ import annotations

import numpy as np
import paddle
from paddle import nn

STEPS = 3
WIDTH = 8
BATCH = 4  # per step: two micro-batches of two


class Stage(nn.Layer):
    """A residual block that passes its mask on: ``(h, mask) -> (h', mask)``."""

    calls = 0

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(WIDTH, WIDTH)
        self.drop = nn.Dropout(0.2)

    def forward(self, args):
        Stage.calls += 1
        h, mask = args
        return h + self.drop(paddle.tanh(self.fc(h))) * mask, mask


class Head(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(WIDTH, WIDTH)

    def forward(self, args):
        return self.fc(args[0])


class MSE(nn.Layer):
    def forward(self, out, label):
        return ((out - label) ** 2).mean()


def data():
    rs = np.random.RandomState(11)
    for _ in range(STEPS):
        x = rs.standard_normal((BATCH, WIDTH)).astype("float32")
        mask = (rs.uniform(size=(BATCH, 1)) > 0.25).astype("float32")
        y = rs.standard_normal((BATCH, WIDTH)).astype("float32")
        yield x, mask, y


def train_pipeline(hcg, interval: int, ctx: dict) -> dict:
    from paddle.distributed import fleet
    from paddle.distributed.fleet.meta_parallel import LayerDesc, PipelineLayer

    paddle.seed(3)
    Stage.calls = 0
    descs = [LayerDesc(Stage) for _ in range(4)] + [LayerDesc(Head)]
    layer = PipelineLayer(layers=descs, num_stages=2, loss_fn=MSE(), recompute_interval=interval,
                          recompute_ctx={"mp_group": hcg.get_model_parallel_group(), **ctx})
    opt = paddle.optimizer.AdamW(learning_rate=0.05, parameters=layer.parameters())
    model = fleet.distributed_model(layer)
    opt = fleet.distributed_optimizer(opt)
    losses = []
    for x, mask, y in data():
        inputs = (paddle.to_tensor(x), paddle.to_tensor(mask))
        losses.append(model.train_batch([inputs, paddle.to_tensor(y)], opt).numpy())
    result = {name: p.numpy() for name, p in layer.named_parameters()}
    result["losses"] = np.stack(losses)
    result["calls"] = np.array(Stage.calls)
    return result


def pipeline_worker(out_dir: str) -> None:
    import _fleet_cpu
    import _spawn
    from _hybrid_worker import patched

    hcg = _fleet_cpu.init_fleet(pp_degree=2)
    _spawn.run_scenarios(out_dir, [
        ("pp-interval0", lambda: train_pipeline(hcg, 0, {})),
        ("pp-interval1", patched(lambda: train_pipeline(hcg, 1, {"partition": True}))),
        ("pp-interval1-offload", patched(
            lambda: train_pipeline(hcg, 1, {"partition": True, "offload": True}))),
    ])


class Mlp(nn.Layer):
    def __init__(self, region):
        super().__init__()
        self.inp = nn.Linear(WIDTH, 16)
        self.blocks = nn.LayerList(
            [nn.Sequential(nn.Linear(16, 16), nn.Dropout(0.1), nn.GELU()) for _ in range(2)])
        self.out = nn.Linear(16, 4)
        self.region = region

    def forward(self, x):
        h = paddle.tanh(self.inp(x))
        for block in self.blocks:
            h = self.region(block, h)
        return self.out(h)


def train_sharded(region) -> dict:
    """Sharding stage 1 over both ranks; each rank trains on its half of every batch."""
    import paddle.distributed as dist
    from _hybrid_worker import train_steps
    from paddle.distributed import fleet

    paddle.seed(5 + dist.get_rank())  # dropout masks differ per rank, like the data
    model = Mlp(region)
    for p in model.parameters():  # the same initial parameters on both ranks
        dist.broadcast(p, src=0)
    opt = paddle.optimizer.AdamW(learning_rate=0.05, parameters=model.parameters())
    model = fleet.distributed_model(model)
    opt = fleet.distributed_optimizer(opt)
    local = slice(dist.get_rank() * BATCH // 2, (dist.get_rank() + 1) * BATCH // 2)
    losses = (((model(paddle.to_tensor(x[local])) - paddle.to_tensor(y[local, :4])) ** 2).mean()
              for x, _, y in data())
    result = train_steps(model, opt, losses)
    result["sharded"] = np.array(type(opt._inner_opt).__name__ == "DygraphShardingOptimizer")
    return result


def sharding_worker(out_dir: str) -> None:
    import _fleet_cpu
    import _spawn

    from paddle_recompute import recompute, recompute_hybrid

    hcg = _fleet_cpu.init_fleet(sharding_degree=2)
    ctx = {"mp_group": hcg.get_model_parallel_group(), "offload": True}
    _spawn.run_scenarios(out_dir, [
        ("sharding-plain", lambda: train_sharded(lambda f, h: f(h))),
        ("sharding-reentrant", lambda: train_sharded(lambda f, h: recompute(f, h))),
        ("sharding-non_reentrant", lambda: train_sharded(
            lambda f, h: recompute(f, h, use_reentrant=False))),
        ("sharding-hybrid", lambda: train_sharded(lambda f, h: recompute_hybrid(ctx, f, h))),
    ])
