"""Thread workloads shared by ``tests/core/test_threads.py`` and ``benchmarks/stress_threads.py``.

Each workload trains its own small model for a number of steps; its job returns every loss,
input gradient, the last step's parameter gradients and the final parameters.  Run alone,
one after another, the jobs give the reference; run at once in threads (``run_concurrently``
with a tiny switch interval, so the interpreter interleaves them inside regions, reruns and
hooks) every number must be equal, bit for bit (NOTE [ Threads ] in ``_core/hooks.py``).

Only ``"dropout in regions"`` draws random numbers: Paddle's generators are process-wide, so
concurrent draws interleave in any program; at most one such job may run at a time.
"""

from __future__ import annotations

import sys
import threading

import numpy as np
import paddle
from paddle import nn

from .._core.hooks import saved_tensors_hooks
from .._entry.recompute import recompute
from .._selective import policies
from .._selective.no_recompute import no_recompute
from .._selective.save_on_cpu import save_on_cpu
from .._selective.tag import tag

DIM = 16


class Block(nn.Layer):
    def __init__(self, p=0.0):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(DIM, 2 * DIM), nn.Linear(2 * DIM, DIM)
        self.norm = nn.LayerNorm(DIM)
        self.drop = nn.Dropout(p) if p else None

    def forward(self, x):
        h = paddle.tanh(self.fc1(self.norm(x)))
        if self.drop is not None:
            h = self.drop(h)
        return x + self.fc2(h)


class Tagged(Block):
    def forward(self, x):
        h = tag(self.fc1(self.norm(x)), "h")
        return x + no_recompute(self.fc2, paddle.tanh(h))


class Scale(paddle.autograd.PyLayer):
    """Saves a non-tensor: plain Paddle keeps it as it is."""

    @staticmethod
    def forward(ctx, x, factor):
        ctx.save_for_backward(x, factor)
        return x * factor

    @staticmethod
    def backward(ctx, grad):
        _, factor = ctx.saved_tensor()
        return grad * factor


def blocks(kind=Block, n=3, **kw):
    return nn.LayerList([kind(**kw) for _ in range(n)])


def each(mode, **kw):
    def forward(model, x):
        for b in model:
            x = recompute(b, x, use_reentrant=mode, **kw)
        return x
    return forward


def nested(model, x):
    def outer(h):
        h = recompute(model[0], h)
        return recompute(model[1], h, use_reentrant=False)
    return model[2](recompute(outer, x, use_reentrant=False))


def plain(model, x):
    for b in model:
        x = b(x)
    return x


def on_cpu(model, x):
    with save_on_cpu():
        return plain(model, x)


def user_hooks(model, x):
    with saved_tensors_hooks(lambda t: t * 1, lambda t: t):
        x = model[0](x)
        x = recompute(model[1], x, use_reentrant=False)
    with paddle.autograd.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        return model[2](x)


def pylayer(model, x):
    return plain(model, Scale.apply(x, 0.5))


def dropout(model, x):
    x = recompute(model[0], x, use_reentrant=False)
    x = recompute(model[1], x, use_reentrant=True)
    return model[2](x)


def _ms_net():
    """A MindSpore Cell with a recomputed Cell and a recomputed Primitive (the MindSpore layer,
    a package of its own, is imported only by this workload)."""
    from paddle_mindspore import nn as msnn
    from paddle_mindspore import ops as msops

    class MsNet(msnn.Cell):
        def __init__(self):
            super().__init__()
            self.fc1 = msnn.Dense(DIM, 2 * DIM)
            self.fc1.recompute()
            self.act = msops.ReLU()
            self.act.recompute()
            self.fc2 = msnn.Dense(2 * DIM, DIM)

        def construct(self, x):
            return self.fc2(self.act(self.fc1(x)))

    return MsNet()


def _ms_loss(model, x):
    import paddle_mindspore as ms

    loss, grads = ms.value_and_grad(lambda t: (model(t) ** 2).mean(), None, model.trainable_params())(x)
    for p, g in zip(model.trainable_params(), grads, strict=True):
        p.grad = g  # the job's optimizer step applies them
    return loss


_POLICY = policies.save_any_of(policies.save_matmuls, policies.save_names("h"))

# name -> (build, forward); forward None: the MindSpore Cell, trained through value_and_grad
WORKLOADS = {
    "non-reentrant": (blocks, each(False)),
    "reentrant": (blocks, each(True)),
    "nested": (blocks, nested),
    "policy+tag+no_recompute": (lambda: blocks(Tagged), each(False, policy=_POLICY)),
    "save_on_cpu": (blocks, on_cpu),
    "user and raw hooks": (blocks, user_hooks),
    "plain": (blocks, plain),
    "plain 2": (blocks, plain),
    "plain PyLayer": (blocks, pylayer),
    "mindspore Cell/Primitive": (_ms_net, None),
    "regions without RNG replay": (blocks, each(False, preserve_rng_state=False)),
    "dropout in regions": (lambda: blocks(p=0.3), dropout),
}
DRAWS = "dropout in regions"


def trainer(name: str, steps: int, seed: int):
    """A job: ``steps`` SGD steps of a model built here, in the calling thread (initialisation
    draws from Paddle's process-wide generator)."""
    build, forward = WORKLOADS[name]
    paddle.seed(seed)
    model = build()
    params = model.parameters() if forward is not None else model.trainable_params()
    opt = paddle.optimizer.SGD(learning_rate=0.05, parameters=params)
    rng = np.random.RandomState(seed)
    if forward is None:  # MindSpore's initialisers draw from their own seed: set the values
        for p in params:
            p.set_value(rng.standard_normal(p.shape).astype("float32") * 0.2)
    xs = [paddle.to_tensor(rng.standard_normal((4, DIM)).astype("float32")) for _ in range(3)]

    def job() -> list:
        if name == DRAWS:
            paddle.seed(seed + 1)  # the only thread that draws: its draws are its own
        out = []
        for step in range(steps):
            x = xs[step % len(xs)]
            if forward is None:
                loss = _ms_loss(model, x)
            else:
                x.stop_gradient = False
                loss = (forward(model, x) ** 2).mean()
                loss.backward()
                out.append(x.grad.numpy())
                x.clear_gradient()
            out.append(loss.numpy())
            if step == steps - 1:
                out.extend(p.grad.numpy() for p in params)
            opt.step()
            opt.clear_grad()
        out.extend(p.numpy() for p in params)
        return out

    return job


def run_concurrently(jobs: list, interval: float = 1e-5) -> tuple[list, list]:
    """Run ``jobs`` (callables) in threads started together, with the switch interval set to
    ``interval`` meanwhile; return their results and ``(index, exception)`` failures."""
    results: list = [None] * len(jobs)
    errors: list = []
    barrier = threading.Barrier(len(jobs))

    def run(i, job):
        try:
            barrier.wait()
            results[i] = job()
        except BaseException as exc:  # noqa: BLE001  (returned to the caller, with its index)
            errors.append((i, exc))

    threads = [threading.Thread(target=run, args=(i, job)) for i, job in enumerate(jobs)]
    before = sys.getswitchinterval()
    sys.setswitchinterval(interval)
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(before)
    return results, errors


def mismatches(expected: list, actual: list | None) -> list[int]:
    """Indices of the entries that differ (all of them when ``actual`` is missing or short)."""
    if actual is None or len(actual) != len(expected):
        return list(range(len(expected)))
    return [i for i, (a, b) in enumerate(zip(expected, actual, strict=True)) if not np.array_equal(a, b)]


# Jobs run at once in one phase.  "dropout": one thread draws while the others run no
# region that replays the RNG (a replay restores the process-wide generator's state).
PHASES = {
    "mixed": ["non-reentrant", "reentrant", "nested", "policy+tag+no_recompute", "save_on_cpu",
              "user and raw hooks", "plain", "plain 2", "plain PyLayer", "mindspore Cell/Primitive"],
    "dropout": [DRAWS, "plain", "plain 2", "regions without RNG replay"],
}
