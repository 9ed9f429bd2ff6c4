"""Worker side of test_param_identity_mp.py: Paddle's tensor-parallel layers with ``main_grad``
(mp_degree 2, two CPU processes over gloo; ``_fleet_cpu`` has the test-only process setup).

The block is Paddle's ``ColumnParallelLinear`` with ``mp_async_allreduce`` and
``mp_fused_linear_param_grad_add`` on (its backward is the ``InnerOverlapLinear`` PyLayer,
which saves the weight and adds its gradient into ``weight.main_grad``), GELU, an
FP8-linear-shaped PyLayer on this rank's shard (``main_grad`` only: it returns no weight
gradient), and ``RowParallelLinear``; the model is wrapped in ``MixPrecisionLayer`` and
trained with ``MixPrecisionOptimizer`` over AdamW: ``STEPS`` steps of ``MICRO``
micro-batches each.  Every scenario saves this rank's losses, ``main_grad``s before each
step, parameters after, and how the PyLayers found the weight.
"""

from __future__ import annotations

import numpy as np
import paddle
import paddle.nn.functional as F
from _rc_helpers import RunCount
from paddle import nn

STEPS, MICRO = 3, 2
WIDTH, HIDDEN, BATCH = 8, 12, 4
SEEN = {"main_grad": 0, "no_main_grad": 0}  # PyLayer backward: did the weight have main_grad?


def fused_linear_param_grad_add(x, dy, dweight, dbias, multi_precision, has_bias):
    """CPU stand-in for Paddle's GPU-only kernel (same contract: ``dweight += x^T dy``,
    ``dbias += sum(dy)``; None starts from zero).  ``mp_layers`` asks for it only where its
    check for a CUDA build passes, which the worker answers yes."""
    SEEN["main_grad" if multi_precision else "no_main_grad"] += 1
    x2 = x.reshape([-1, x.shape[-1]])
    dy2 = dy.reshape([-1, dy.shape[-1]])
    dw = paddle.matmul(x2, dy2, transpose_x=True)
    db = dy2.sum(0) if has_bias else None
    if dweight is not None:
        dw = dweight.add_(dw)
    if has_bias and dbias is not None:
        db = dbias.add_(db)
    return dw, db


class FP8StyleLinear(paddle.autograd.PyLayer):
    """PaddleFormers' FP8 linear: the weight's gradient goes into ``main_grad`` only."""

    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        return paddle.matmul(x, weight)

    @staticmethod
    def backward(ctx, dy):
        x, weight = ctx.saved_tensor()
        dx = paddle.matmul(dy, weight, transpose_y=True)
        if not hasattr(weight, "main_grad"):
            SEEN["no_main_grad"] += 1
            return dx, None  # the gradient is lost, as PaddleFormers' would lose it
        SEEN["main_grad"] += 1
        dw = paddle.matmul(x.reshape([-1, x.shape[-1]]), dy.reshape([-1, dy.shape[-1]]), transpose_x=True)
        if weight.main_grad is None:
            weight.main_grad = paddle.zeros(weight.shape, dtype=paddle.float32)
        weight.main_grad.add_(dw)
        return dx, None


class Block(nn.Layer):
    calls = RunCount()  # forward runs, reruns included

    def __init__(self):
        super().__init__()
        from paddle.distributed.fleet.meta_parallel import ColumnParallelLinear, RowParallelLinear

        self.up = ColumnParallelLinear(WIDTH, HIDDEN, has_bias=True, gather_output=False)
        self.mid = self.create_parameter([HIDDEN // 2, HIDDEN // 2])
        self.down = RowParallelLinear(HIDDEN, WIDTH, has_bias=True, input_is_parallel=True)

    def forward(self, x):
        self.calls += 1
        h = F.gelu(self.up(x))
        h = paddle.tanh(FP8StyleLinear.apply(h, self.mid))
        return x + self.down(h)


class SPBlock(Block):
    """A Block with a LayerNorm marked as a sequence-parallel parameter: Paddle's hooks
    all-reduce its gradient over the model-parallel group every ``MICRO`` backwards."""

    def __init__(self):
        super().__init__()
        from paddle.distributed.fleet.utils.sequence_parallel_utils import mark_as_sequence_parallel_parameter

        self.norm = nn.LayerNorm(WIDTH)
        mark_as_sequence_parallel_parameter(self.norm.weight)
        mark_as_sequence_parallel_parameter(self.norm.bias)

    def forward(self, x):
        return super().forward(self.norm(x))


class Net(nn.Layer):
    def __init__(self, block=Block):
        super().__init__()
        self.embed = nn.Linear(WIDTH, WIDTH)  # Paddle's layer needs an input with a gradient
        self.blocks = nn.LayerList([block(), block()])
        self.head = nn.Linear(WIDTH, 1)

    def forward(self, x, region):
        x = self.embed(x)
        for block in self.blocks:
            x = region(block, x)
        return self.head(x)


def batches(seed=3):
    rs = np.random.RandomState(seed)
    return [paddle.to_tensor(rs.uniform(-1, 1, size=(BATCH, WIDTH)).astype("float32"))
            for _ in range(STEPS * MICRO)]


def train(region, sequence_parallel=False) -> dict:
    from paddle.distributed.fleet.meta_parallel import model_parallel_random_seed
    from paddle.distributed.fleet.utils.mix_precision_utils import MixPrecisionLayer, MixPrecisionOptimizer

    model_parallel_random_seed(2024)
    net = Net(SPBlock if sequence_parallel else Block)
    model = MixPrecisionLayer(net, dtype="float16")  # the wrapper only: parameters stay float32
    opt = MixPrecisionOptimizer(paddle.optimizer.AdamW(learning_rate=0.05, parameters=model.parameters()))
    SEEN.update(main_grad=0, no_main_grad=0)
    data = batches()
    if sequence_parallel:  # each rank its own part of the sequence
        from paddle.distributed.fleet.utils import sequence_parallel_utils as sp

        sp.register_sequence_parallel_allreduce_hooks(net, MICRO, False)
        data = batches(3 + paddle.distributed.get_rank())
    losses, grads = [], {}
    for step in range(STEPS):
        for micro in range(MICRO):
            loss = (model(data[step * MICRO + micro], region) ** 2).mean()
            loss.backward()
            losses.append(loss.numpy())
        for name, p in net.named_parameters():
            assert p.grad is None, f"{name} has .grad beside main_grad"
            assert p.main_grad is not None, f"{name} got no main_grad: its gradient was lost"
            grads.setdefault(name, []).append(p.main_grad.numpy().copy())
        opt.step()
        opt.clear_grad()
    result = {f"main_grad.{name}": np.stack(g) for name, g in grads.items()}
    result.update({f"param.{name}": p.numpy() for name, p in net.named_parameters()})
    result["losses"] = np.stack(losses)
    result["calls"] = np.array([b.calls for b in net.blocks])
    result["seen"] = np.array([SEEN["main_grad"], SEEN["no_main_grad"]])
    return result


def plain(function, *args):
    return function(*args)


def regions(group) -> dict:
    from paddle_recompute import policies, recompute, recompute_hybrid

    return {
        "reentrant": lambda f, x: recompute(f, x, use_reentrant=True),
        "non_reentrant": lambda f, x: recompute(f, x, use_reentrant=False),
        "policy": lambda f, x: recompute(f, x, use_reentrant=False, policy=policies.save_matmuls),
        "hybrid": lambda f, x: recompute_hybrid({"mp_group": group}, f, x),
        "hybrid_partition_offload": lambda f, x: recompute_hybrid(
            {"mp_group": group, "partition": True, "offload": True}, f, x),
    }


def worker(out_dir: str) -> None:
    import _fleet_cpu
    import _spawn

    hcg = _fleet_cpu.init_fleet(mp_degree=2, mp_configs={
        "mp_async_allreduce": True, "mp_fused_linear_param_grad_add": True, "mp_skip_c_identity": True})
    from paddle.distributed.fleet.layers.mpu import mp_layers

    paddle._C_ops.fused_linear_param_grad_add = fused_linear_param_grad_add
    mp_layers.is_fused_linear_param_grad_add_supported = lambda: True  # a CUDA-build check
    scenarios = [("plain", lambda: train(plain))]
    group = hcg.get_model_parallel_group()
    scenarios += [(name, lambda r=r: train(r)) for name, r in regions(group).items()]
    scenarios.append(("sp-plain", lambda: train(plain, sequence_parallel=True)))
    # Not with partition: it keeps 1/mp of an input and all-gathers the rest from the other
    # ranks, which holds only for inputs replicated over the group (sequence-parallel
    # activations are not).
    scenarios += [(f"sp-{name}", lambda r=r: train(r, sequence_parallel=True))
                  for name, r in regions(group).items() if "partition" not in name]
    _spawn.run_scenarios(out_dir, scenarios)
