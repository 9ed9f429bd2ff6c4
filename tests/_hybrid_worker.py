"""Worker side of test_hybrid_parallel.py's tensor-parallel tests (mp_degree 2, two CPU
processes over gloo; see ``_fleet_cpu`` for the test-only process setup).

Every scenario trains the same tensor-parallel model for ``STEPS`` AdamW steps, with or
without ``recompute_hybrid`` around each block, and saves this rank's parameters, losses
and counts with ``_spawn.save``.
"""

from __future__ import annotations

import contextlib
import gc

import numpy as np
import paddle
import paddle.nn.functional as F
from _rc_helpers import RunCount
from paddle import nn

STEPS = 3
VOCAB, WIDTH, HIDDEN = 32, 8, 24
BATCH, SEQ = 3, 5  # the (BATCH, SEQ, 1) mask has 15 elements: not divisible by mp = 2


class TPBlock(nn.Layer):
    """LayerNorm, ColumnParallelLinear, dropout on the model-parallel stream, GELU,
    RowParallelLinear, dropout on the global stream; optional mask and scale."""

    def __init__(self):
        super().__init__()
        from paddle.distributed.fleet.meta_parallel import ColumnParallelLinear, RowParallelLinear

        self.norm = nn.LayerNorm(WIDTH)
        self.up = ColumnParallelLinear(WIDTH, HIDDEN, has_bias=True, gather_output=False)
        self.down = RowParallelLinear(HIDDEN, WIDTH, has_bias=True, input_is_parallel=True)

    calls = RunCount()  # forward runs, reruns included

    def forward(self, x, mask=None, *, scale=None):
        from paddle.distributed.fleet.meta_parallel import get_rng_state_tracker

        self.calls += 1
        h = self.up(self.norm(x))
        with get_rng_state_tracker().rng_state():  # differs per rank
            h = F.dropout(h, 0.2)
        h = F.dropout(self.down(F.gelu(h)), 0.1)  # the same on every rank
        if mask is not None:
            h = h * mask
        if scale is not None:
            h = h * scale
        return x + h


class Net(nn.Layer):
    def __init__(self, two_tensor: bool):
        super().__init__()
        from paddle.distributed.fleet.meta_parallel import VocabParallelEmbedding

        self.embed = VocabParallelEmbedding(VOCAB, WIDTH)
        self.blocks = nn.LayerList([TPBlock(), TPBlock()])
        self.gain = self.create_parameter([WIDTH], default_initializer=nn.initializer.Constant(1.5))
        self.head = nn.Linear(WIDTH, 1)
        self.two_tensor = two_tensor

    def forward(self, ids, mask, region):
        h = self.embed(ids)
        for block in self.blocks:
            if self.two_tensor:  # (hidden, mask) positional, a tensor keyword with a gradient
                h = region(block, h, mask, scale=self.gain)
            else:
                h = region(block, h)
        return self.head(h)


def batches():
    rs = np.random.RandomState(5)
    for _ in range(STEPS):
        ids = rs.randint(0, VOCAB, size=(BATCH, SEQ)).astype("int64")
        mask = (rs.uniform(size=(BATCH, SEQ, 1)) > 0.3).astype("float32")
        yield paddle.to_tensor(ids), paddle.to_tensor(mask)


def train(two_tensor: bool, region) -> dict:
    """``STEPS`` AdamW steps from the same seeds; parameters, losses and block calls."""
    from paddle.distributed.fleet.meta_parallel import model_parallel_random_seed

    model_parallel_random_seed(2024)
    model = Net(two_tensor)
    opt = paddle.optimizer.AdamW(learning_rate=0.05, parameters=model.parameters())
    result = train_steps(model, opt, ((model(ids, mask, region) ** 2).mean() for ids, mask in batches()))
    result["calls"] = np.array([b.calls for b in model.blocks])
    return result


def train_steps(model, opt, losses) -> dict:
    """One optimizer step per loss of ``losses`` (a generator: each forward runs after the
    previous step); the parameters and the losses."""
    values = []
    for loss in losses:
        loss.backward()
        opt.step()
        opt.clear_grad()
        values.append(loss.numpy())
    result = {name: p.numpy() for name, p in model.named_parameters()}
    result["losses"] = np.stack(values)
    return result


def plain(function, *args, **kwargs):
    return function(*args, **kwargs)


def hybrid(ctx):
    from paddle_recompute import recompute_hybrid

    return lambda function, *args, **kwargs: recompute_hybrid(ctx, function, *args, **kwargs)


def paddle_builtin(ctx):
    """Paddle's own name, bound at import as PipelineLayer binds it; run under patch_paddle."""
    from paddle.incubate.distributed.fleet import recompute_hybrid

    return lambda function, *args, **kwargs: recompute_hybrid(ctx, function, *args, **kwargs)


def patched(run):
    from paddle_recompute import paddle_patched

    def call():
        with paddle_patched():
            return run()

    return call


def held_bytes(ctx) -> dict:
    """Host bytes a region keeps after forward (a 64 KiB input), and its stashes' bytes."""
    from paddle.base import core

    from paddle_recompute import recompute_hybrid

    paddle.seed(4)
    x = paddle.randn([64, 256])
    x.stop_gradient = False
    gc.collect()
    before = core.host_memory_stat_current_value("Allocated", 0)
    h = x * 2.0
    with _recording_stashes() as stashed:
        y = recompute_hybrid(ctx, lambda t: paddle.tanh(t) * 3.0, h)
    del h  # only the region can keep it now
    held = core.host_memory_stat_current_value("Allocated", 0) - before - y._numel() * 4
    y.sum().backward()
    return {"held": np.array(held), "input": np.array(x._numel() * 4),
            "stashed": np.array(stashed), "grad": x.grad.numpy()}


@contextlib.contextmanager
def _recording_stashes():
    """Record the bytes recompute_hybrid keeps of each input (0: the input itself)."""
    from paddle_recompute._interop import hybrid

    stashed = []
    original = hybrid.run_reentrant

    def spy(*args, stash, **kwargs):
        def recording(t):
            kept = t if stash is None else stash(t)
            stashed.append(0 if kept is t else kept.nbytes)
            return kept

        return original(*args, stash=recording, **kwargs)

    hybrid.run_reentrant = spy
    try:
        yield stashed
    finally:
        hybrid.run_reentrant = original


def dtypes(region) -> dict:
    """Inputs of several dtypes and sizes (odd numel, empty) through one region."""
    paddle.seed(9)
    x = paddle.randn([3, 5, 7])  # 105 elements
    b = paddle.randn([4, 2]).astype("bfloat16")
    x.stop_gradient = b.stop_gradient = False
    ids = paddle.randint(0, 5, [7])
    flag = paddle.randn([3, 5, 1]) > 0
    empty = paddle.zeros([0, 7])

    def f(x, b, ids, flag, empty):
        h = paddle.where(flag, x * ids.astype(x.dtype), -F.dropout(x, 0.3))
        return h * 2.0 + empty.sum(), b * 3.0

    with _recording_stashes() as stashed:
        h, c = region(f, x, b, ids, flag, empty)
    (h.sum() + c.astype("float32").sum() * 0.5).backward()
    return {"h": h.numpy(), "c": c.astype("float32").numpy(), "x_grad": x.grad.numpy(),
            "b_grad": b.grad.astype("float32").numpy(), "stashed": np.array(stashed)}


def scenarios(group) -> list:
    ctx = {"mp_group": group}
    out = [("tp-plain", lambda: train(False, plain)),
           ("tp-two-plain", lambda: train(True, plain))]
    for partition in (False, True):
        for offload in (False, True):
            c = {**ctx, "partition": partition, "offload": offload}
            out.append((f"tp-hybrid-p{int(partition)}-o{int(offload)}", lambda c=c: train(False, hybrid(c))))
    for offload in (False, True):
        c = {**ctx, "partition": True, "offload": offload}
        out.append((f"tp-two-hybrid-p1-o{int(offload)}", lambda c=c: train(True, hybrid(c))))
    c = {**ctx, "partition": True}
    out.append(("tp-two-paddle-patched", patched(lambda: train(True, paddle_builtin(c)))))
    for partition in (False, True):
        c = {**ctx, "partition": partition}
        out.append((f"memory-p{int(partition)}", lambda c=c: held_bytes(c)))
    out.append(("dtypes-plain", lambda: dtypes(plain)))
    for offload in (False, True):
        c = {**ctx, "partition": True, "offload": offload}
        out.append((f"dtypes-p1-o{int(offload)}", lambda c=c: dtypes(hybrid(c))))
    return out


def worker(out_dir: str) -> None:
    import _fleet_cpu
    import _spawn

    hcg = _fleet_cpu.init_fleet(mp_degree=2)
    _spawn.run_scenarios(out_dir, scenarios(hcg.get_model_parallel_group()))
