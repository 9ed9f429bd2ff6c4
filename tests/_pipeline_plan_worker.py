"""Worker side of test_pipeline_plan.py: a ``PipelineLayer`` of four blocks over two stages
(two CPU processes over gloo; ``_fleet_cpu`` has the test-only process setup), trained with
1F1B over four micro-batches, once without recompute and once with each rank's stage
planned by ``planner.plan_stage`` under one device budget.

Memory is Paddle's host allocator (``FLAGS_enable_host_memory_stat=1``, set by
tests/conftest.py before Paddle's import and inherited by the spawned ranks).  A step's
fixed memory is what is allocated just before it (parameters, gradients, optimizer state);
``held`` is the most allocated beyond it at the end of a micro-batch's forward of the stage
(the activations of the micro-batches in flight, what a plan bounds), ``peaks`` the
allocator's peak during ``train_batch`` beyond it (the backward's working memory on top).
Steps after the first are measured (the first allocates gradients and optimizer state).
"""

from __future__ import annotations

import numpy as np
import paddle
from paddle import nn

STEPS = 3
MICRO_BATCHES = 4
MICRO = 16  # rows per micro-batch
WIDTH = 64
INNER = 256
STAGES = 2


class Act(nn.GELU):
    """GELU that counts its forwards (a rerun runs members' own forwards, past hooks)."""

    calls = 0

    def forward(self, x):
        Act.calls += 1
        return super().forward(x)


class Block(nn.Layer):
    """``(h, mask) -> (h + mlp(h) * mask, mask)``, dropout inside (its mask is replayed).
    The mask is passed on as it is: the pipeline frees a stage's outputs once sent, that
    mask among them, and a recomputed block that took it reruns from its own alias."""

    def __init__(self):
        super().__init__()
        self.up = nn.Linear(WIDTH, INNER)
        self.act = Act()
        self.drop = nn.Dropout(0.1)
        self.down = nn.Linear(INNER, WIDTH)

    def forward(self, args):
        h, mask = args
        return h + self.down(self.drop(self.act(self.up(h)))) * mask, mask


class MSE(nn.Layer):
    def forward(self, out, label):
        return ((out[0] - label) ** 2).mean()


class WithLoss(nn.Layer):
    """The last stage as it trains: its layers, then the loss (whose saves count too)."""

    def __init__(self, stage, loss):
        super().__init__()
        self.stage, self.loss = stage, loss

    def forward(self, args, label):
        return self.loss(self.stage(args), label)


def data():
    rs = np.random.RandomState(21)
    rows = MICRO * MICRO_BATCHES
    for _ in range(STEPS):
        x = rs.standard_normal((rows, WIDTH)).astype("float32")
        mask = (rs.uniform(size=(rows, 1)) > 0.25).astype("float32")
        y = rs.standard_normal((rows, WIDTH)).astype("float32")
        yield x, mask, y


def init_fleet():
    """1F1B over two stages, four micro-batches of ``MICRO`` rows a step."""
    import _fleet_cpu
    from paddle.distributed import fleet

    _fleet_cpu.install()
    strategy = fleet.DistributedStrategy()
    strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 1, "pp_degree": STAGES,
                               "sharding_degree": 1}
    strategy.pipeline_configs = {"accumulate_steps": MICRO_BATCHES, "micro_batch_size": MICRO}
    fleet.init(is_collective=True, strategy=strategy)
    return fleet.get_hybrid_communicate_group()


def build():
    from paddle.distributed.fleet.meta_parallel import LayerDesc, PipelineLayer

    paddle.seed(3)
    return PipelineLayer(layers=[LayerDesc(Block) for _ in range(4)], num_stages=STAGES,
                         loss_fn=MSE())


def sample(stage: int):
    """One micro-batch's inputs of ``stage`` (what the stage before sends, on stage 1)."""
    x, mask, y = next(data())
    h = paddle.to_tensor(x[:MICRO])
    h.stop_gradient = stage == 0  # a received activation takes gradients
    return (h, paddle.to_tensor(mask[:MICRO])), paddle.to_tensor(y[:MICRO])


def train(layer) -> dict:
    """Train ``STEPS`` steps; losses, parameters, forward calls, and per step the fixed
    memory and the activation peak (host allocator bytes)."""
    from paddle.base import core
    from paddle.distributed import fleet

    from paddle_recompute.planner import route_forwards

    opt = paddle.optimizer.AdamW(learning_rate=0.05, parameters=layer.parameters())
    model = fleet.distributed_model(layer)
    opt = fleet.distributed_optimizer(opt)
    Act.calls = 0
    held: list = []  # bytes allocated after each micro-batch's forward of the stage

    def measured(forward):  # PipelineParallel calls ``layer.forward``: hooks never run
        def run(*args, **kwargs):
            out = forward(*args, **kwargs)
            held.append(core.host_memory_stat_current_value("Allocated", 0))
            return out

        return run

    after_forward = route_forwards([(layer, measured)])
    losses, fixed, peaks, held_peaks = [], [], [], []
    for x, mask, y in data():
        inputs = (paddle.to_tensor(x), paddle.to_tensor(mask))
        label = paddle.to_tensor(y)
        before = core.host_memory_stat_current_value("Allocated", 0)
        core.host_memory_stat_reset_peak_value("Allocated", 0)
        held.clear()
        losses.append(model.train_batch([inputs, label], opt).numpy())
        peaks.append(core.host_memory_stat_peak_value("Allocated", 0) - before)
        held_peaks.append(max(held) - before)
        fixed.append(before)
    after_forward.remove()
    result = {name: p.numpy() for name, p in layer.named_parameters()}
    result.update(losses=np.stack(losses), calls=np.array(Act.calls), fixed=np.array(fixed),
                  peaks=np.array(peaks), held=np.array(held_peaks))
    return result


def plain(state: dict) -> dict:
    import paddle.distributed as dist
    from paddle.base import core

    base = core.host_memory_stat_current_value("Allocated", 0)
    result = train(build())
    result["fixed"] = result["fixed"] - base
    # what the stage holds between steps: parameters, gradients, AdamW's moments
    state["fixed"] = int(result["fixed"][1:].max())
    # both stages' allocator peaks over a step without recompute, beyond that
    peaks = paddle.to_tensor([int(result["peaks"][1:].max()) if r == dist.get_rank() else 0
                              for r in range(STAGES)], dtype="int64")
    dist.all_reduce(peaks)
    state["plain_peaks"] = [int(v) for v in peaks.numpy()]
    return result


def planned(hcg, state: dict) -> dict:
    import paddle.distributed as dist
    from paddle.base import core

    from paddle_recompute import planner

    stage = hcg.get_stage_id()
    base = core.host_memory_stat_current_value("Allocated", 0)
    layer = build()
    target = layer if stage == 0 else WithLoss(layer, MSE())
    args, label = sample(stage)
    inputs = (args,) if stage == 0 else (args, label)
    # One device budget for both stages: the larger fixed memory, plus a room halfway between
    # the last stage's peak without recompute (one micro-batch in flight: it fits) and the
    # first stage's (two in flight: it does not).  No headroom is passed: plan_stage takes
    # the backward's working memory out of the budget itself.
    fixed = paddle.to_tensor([state["fixed"]], dtype="int64")
    dist.all_reduce(fixed, op=dist.ReduceOp.MAX)
    first, last = state["plain_peaks"]
    budget = int(fixed.numpy()[0]) + (first + last) // 2
    plan = planner.plan_stage(target, *inputs, stage=stage, stages=STAGES,
                              micro_batches=MICRO_BATCHES, budget=budget,
                              fixed_bytes=state["fixed"],
                              final_rounds=0)  # no timed duel between plans: deterministic
    with plan.apply():
        result = train(layer)
    result["fixed"] = result["fixed"] - base
    result.update(budget=np.array(budget), stage_budget=np.array(plan.budget),
                  predicted=np.array(plan.predicted_bytes), baseline=np.array(plan.baseline_bytes),
                  measured_fixed=np.array(state["fixed"]), plain_peaks=np.array(state["plain_peaks"]),
                  choices=np.array(sorted(f"{c.kind}:{','.join(c.targets)}" for c in plan.choices
                                          if c.kind != "keep")))
    return result


def every_block(use_reentrant: bool) -> dict:
    """Every block recomputed whole: each region takes the mask the stage passes on as it
    is, which the pipeline frees once sent (whether the plan recomputes a whole block
    depends on measured times; this run always does)."""
    from paddle_recompute import recompute
    from paddle_recompute.planner import route_forwards

    def recomputed(forward):
        return lambda *args: recompute(forward, *args, use_reentrant=use_reentrant)

    layer = build()
    blocks = [sub for sub in layer.sublayers() if isinstance(sub, Block)]
    routed = route_forwards([(block, recomputed) for block in blocks])
    try:
        return train(layer)
    finally:
        routed.remove()


def worker(out_dir: str) -> None:
    import _spawn

    hcg = init_fleet()
    state: dict = {}
    _spawn.run_scenarios(out_dir, [
        ("plain", lambda: plain(state)),
        ("planned", lambda: planned(hcg, state)),
        ("every_block_reentrant", lambda: every_block(True)),
        ("every_block_non_reentrant", lambda: every_block(False)),
    ])
