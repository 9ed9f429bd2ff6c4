"""recompute_sequential with segments="auto": parity, the chosen cut, budget, cache, errors."""

import numpy as np
import paddle
import pytest
from _rc_helpers import RunCount
from paddle import nn
from paddle.base import core

import paddle_recompute as pr
from paddle_recompute._planner.plan import segments as _sequential_auto
from paddle_recompute._planner.solvers.segments import brute_force_segments, segmentation_cost


class Stage(nn.Layer):
    """Linear + Tanh + Dropout: saves a fixed number of bytes; counts its calls."""

    def __init__(self, width=64):
        super().__init__()
        self.lin = nn.Linear(width, width)
        self.drop = nn.Dropout(0.2)

    calls = RunCount()  # forward runs, reruns included

    def forward(self, x):
        self.calls += 1
        return self.drop(paddle.tanh(self.lin(x)))


def _chain(n=9):
    paddle.seed(1)
    return nn.Sequential(*[Stage() for _ in range(n)])


def _x():
    x = paddle.randn([32, 64])
    x.stop_gradient = False
    return x


@pytest.fixture(autouse=True)
def _fresh_cache():
    _sequential_auto.clear_cache()
    yield
    _sequential_auto.clear_cache()


def _run(model, x, ctx):
    paddle.seed(3)
    out = model(x) if ctx is None else pr.recompute_sequential(ctx, model, x)
    out.sum().backward()
    grads = [p.grad.numpy().copy() for p in model.parameters()] + [x.grad.numpy().copy()]
    model.clear_gradients()
    x.clear_gradient()
    return out.numpy(), grads


@pytest.mark.parametrize("budget", [None, 0.8, 0.65])
def test_parity_with_plain_run(use_reentrant, budget):
    model, x = _chain(), _x()
    ref_out, ref_grads = _run(model, x, None)
    ctx = {"segments": "auto", "budget": budget, "use_reentrant": use_reentrant}
    out, grads = _run(model, x, ctx)
    np.testing.assert_array_equal(out, ref_out)
    for g, r in zip(grads, ref_grads, strict=True):
        np.testing.assert_array_equal(g, r)


def test_uniform_chain_gets_the_optimal_cut_and_recomputes_it():
    model, x = _chain(9), _x()
    stages = _sequential_auto.chain_stages(list(model), (x,), {})
    # identical stages, except that the first one's input is the caller's (not counted)
    assert len({s.saved for s in stages[1:]}) == 1 and stages[0].saved < stages[1].saved
    starts = _sequential_auto.auto_starts(list(model), (x,), {}, None)
    best = brute_force_segments(stages)
    got = segmentation_cost(stages, starts)
    assert (got.peak, got.time) == (best.peak, best.time) and len(starts) > 1
    for s in model:
        s.calls = 0
    _run(model, x, {"segments": "auto", "use_reentrant": False})
    recomputed = [s.calls == 2 for s in model]  # cached: no profiling run this time
    last = starts[-1]
    assert recomputed == [True] * last + [False] * (len(model) - last)


def test_profiled_once_per_signature():
    model, x = _chain(4), _x()
    ctx = {"segments": "auto", "budget": 0.8, "use_reentrant": False}
    _run(model, x, ctx)
    first = [s.calls for s in model]
    _run(model, x, ctx)
    second = [s.calls - f for s, f in zip(model, first, strict=True)]
    assert [f - s for f, s in zip(first, second, strict=True)] == [1, 1, 1, 1]  # the profile run


def test_budget_lowers_held_memory():
    model, x = _chain(16), _x()
    held = {}
    for budget in (None, 1.0, 0.7, 0.45):
        paddle.seed(3)
        before = core.host_memory_stat_current_value("Allocated", 0)
        out = pr.recompute_sequential({"segments": "auto", "budget": budget}, model, x)
        held[budget] = core.host_memory_stat_current_value("Allocated", 0) - before
        del out
    assert held[1.0] > held[0.7] > held[0.45] >= held[None]


@pytest.mark.parametrize("ctx, error, match", [
    ({"segments": 2, "budget": 0.5}, ValueError, "needs ctx\\['segments'\\] = 'auto'"),
    ({"segments": "auto", "budget": "lots"}, TypeError, "budget"),
    ({"segments": "auto", "budget": 2.0}, ValueError, r"\(0, 1\]"),
    ({"segments": "automatic"}, ValueError, "or 'auto'"),
    ({"segments": "auto", "budget": 10}, pr.planner.InfeasibleBudget, "minimum achievable peak memory"),
])
def test_bad_ctx(ctx, error, match):
    with pytest.raises(error, match=match):
        pr.recompute_sequential(ctx, _chain(3), _x())


def test_error_while_profiling_leaves_no_state():
    class Boom(nn.Layer):
        def forward(self, x):
            raise RuntimeError("boom")

    chain, x = [Stage(), Boom()], _x()
    rng = paddle.get_rng_state()
    with pytest.raises(RuntimeError, match="boom"):
        pr.recompute_sequential({"segments": "auto"}, chain, x)
    assert paddle.is_grad_enabled()
    after = paddle.rand([8]).numpy()  # the Stage's dropout drew numbers before the error
    paddle.set_rng_state(rng)
    np.testing.assert_array_equal(after, paddle.rand([8]).numpy())
