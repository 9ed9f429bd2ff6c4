"""checkpoint / checkpoint_sequential: torch.utils.checkpoint's semantics, exact against plain runs."""

import contextlib
import warnings

import numpy as np
import paddle
import pytest
from _rc_helpers import RunCount
from paddle import nn

from paddle_recompute import checkpoint, checkpoint_sequential
from paddle_recompute._entry import recompute as _api


class Counted(nn.Layer):
    """Linear + tanh + dropout that counts its forward calls."""

    def __init__(self, width=6):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.drop = nn.Dropout(0.3)

    calls = RunCount()  # forward runs, reruns included

    def forward(self, x, scale=1.0):
        self.calls += 1
        return self.drop(paddle.tanh(self.fc(x))) * scale


def run(fn, layers, x, seed=3):
    """Gradients of x and every parameter, and the loss, after fn(x).sum().backward()."""
    x = x.detach()
    x.stop_gradient = False
    paddle.seed(seed)
    loss = fn(x).square().sum()
    loss.backward()
    params = [p for layer in layers for p in layer.parameters()]
    out = [loss.numpy(), x.grad.numpy()] + [p.grad.numpy() for p in params]
    for p in params:
        p.clear_gradient()
    return out


def assert_exact(got, expected):
    for a, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(a, e)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_is_exact_and_recomputes(use_reentrant):
    block, x = Counted(), paddle.randn([4, 6])
    expected = run(lambda t: block(t, scale=2.0), [block], x)
    block.calls = 0
    got = run(lambda t: checkpoint(block, t, scale=2.0, use_reentrant=use_reentrant), [block], x)
    assert_exact(got, expected)
    assert block.calls == 2  # forward, then the recomputation in backward


@pytest.mark.parametrize("use_reentrant", [True, False])
@pytest.mark.parametrize("n, segments", [(4, 2), (5, 2), (6, 3), (4, 4), (3, 1)])
def test_checkpoint_sequential_leaves_the_last_segment_alone(n, segments, use_reentrant):
    blocks = [Counted() for _ in range(n)]
    model, x = nn.Sequential(*blocks), paddle.randn([4, 6])
    expected = run(model, blocks, x)
    for b in blocks:
        b.calls = 0
    got = run(lambda t: checkpoint_sequential(model, segments, t, use_reentrant=use_reentrant), blocks, x)
    assert_exact(got, expected)
    size = n // segments
    checkpointed = size * (segments - 1)  # as torch: equal chunks, the last one takes the rest
    assert [b.calls for b in blocks] == [2] * checkpointed + [1] * (n - checkpointed)


def test_checkpoint_sequential_takes_a_list_of_callables():
    blocks = [Counted() for _ in range(3)]
    funcs = [blocks[0], lambda t: blocks[1](t) + 1.0, blocks[2]]
    x = paddle.randn([4, 6])
    expected = run(lambda t: blocks[2](blocks[1](blocks[0](t)) + 1.0), blocks, x)
    got = run(lambda t: checkpoint_sequential(funcs, 3, t, use_reentrant=False), blocks, x)
    assert_exact(got, expected)


def test_missing_use_reentrant_warns_and_means_reentrant(monkeypatch):
    seen = []
    original = _api.run_reentrant
    monkeypatch.setattr(_api, "run_reentrant", lambda *a, **k: seen.append(1) or original(*a, **k))
    block, x = Counted(), paddle.randn([4, 6])
    expected = run(block, [block], x)
    with pytest.warns(UserWarning, match="pass use_reentrant explicitly") as record:
        got = run(lambda t: checkpoint(block, t), [block], x)
    assert record[0].filename == __file__  # points at the caller, as PyTorch's does
    assert_exact(got, expected)
    with pytest.warns(UserWarning, match="checkpoint_sequential: pass use_reentrant"):
        checkpoint_sequential(nn.Sequential(Counted(), Counted()), 2, x)
    assert len(seen) == 2


def test_explicit_use_reentrant_does_not_warn():
    x = paddle.randn([4, 6])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checkpoint(Counted(), x, use_reentrant=True)
        checkpoint_sequential(nn.Sequential(Counted(), Counted()), 2, x, use_reentrant=False)


class Recorder:
    def __init__(self):
        self.events = []

    def context(self, name):
        @contextlib.contextmanager
        def cm():
            self.events.append(f"enter {name}")
            yield
            self.events.append(f"exit {name}")
        return cm()


def test_context_fn_wraps_forward_and_recomputation():
    rec, block = Recorder(), Counted()
    x = paddle.randn([4, 6])
    x.stop_gradient = False
    out = checkpoint(block, x, use_reentrant=False,
                     context_fn=lambda: (rec.context("forward"), rec.context("recompute")))
    assert rec.events == ["enter forward", "exit forward"]
    out.sum().backward()
    assert rec.events == ["enter forward", "exit forward", "enter recompute", "exit recompute"]


@pytest.mark.parametrize("use_reentrant", [True, None])
def test_context_fn_and_debug_need_non_reentrant(use_reentrant):
    x = paddle.randn([4, 6])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the missing-use_reentrant warning is tested above
        with pytest.raises(ValueError, match="context_fn is only supported with use_reentrant=False"):
            checkpoint(Counted(), x, use_reentrant=use_reentrant,
                       context_fn=lambda: (contextlib.nullcontext(), contextlib.nullcontext()))
        with pytest.raises(ValueError, match="pass use_reentrant=False"):
            checkpoint(Counted(), x, use_reentrant=use_reentrant, debug=True)


def test_preserve_rng_state_false_draws_new_dropout_masks():
    block, x = Counted(), paddle.randn([64, 6])
    expected = run(block, [block], x)
    got = run(lambda t: checkpoint(block, t, use_reentrant=True, preserve_rng_state=False), [block], x)
    assert not np.array_equal(got[1], expected[1])  # a different mask in the recomputation


@pytest.mark.parametrize("kwargs, error, message", [
    ({"segments": 0}, ValueError, "segments must be an integer from 1"),
    ({"segments": 3}, ValueError, "segments must be an integer from 1"),
    ({"segments": 1, "bogus": 1}, ValueError, "unexpected keyword arguments \\['bogus'\\]"),
])
def test_checkpoint_sequential_bad_arguments(kwargs, error, message):
    model = nn.Sequential(Counted(), Counted())
    segments = kwargs.pop("segments")
    with pytest.raises(error, match=message):
        checkpoint_sequential(model, segments, paddle.randn([4, 6]), use_reentrant=False, **kwargs)


def test_checkpoint_sequential_passes_options():
    blocks = [Counted() for _ in range(2)]
    x = paddle.randn([64, 6])
    expected = run(nn.Sequential(*blocks), blocks, x)
    got = run(lambda t: checkpoint_sequential(nn.Sequential(*blocks), 2, t, use_reentrant=False,
                                              preserve_rng_state=False), blocks, x)
    assert not np.array_equal(got[1], expected[1])
