"""Recompute inside recompute: any depth, any mix of modes, and coexistence with user hooks.

Paddle's built-in non-reentrant recompute cannot nest ("only one pair of hooks is allowed at
a time"); ours shares one hook pair through a stack of frames (see ``_hooks``), the
innermost region owning the tensors saved inside it.
"""

import itertools

import numpy as np
import paddle
import pytest
from _rc_helpers import Counting
from paddle import nn
from paddle.base import core

import paddle_recompute as pr
from paddle_recompute import RecomputeError, recompute
from paddle_recompute._core import hooks as _hooks

MODE_MIXES = [
    modes for depth in (1, 2, 3) for modes in itertools.product((True, False), repeat=depth)
]


def _mix_id(modes) -> str:
    return "-".join("re" if m else "nonre" for m in modes)


class Level(nn.Layer):
    """``Linear -> tanh -> inner -> Linear -> sigmoid``; with ``mode`` set, the body is one
    recompute region (``mode`` is its ``use_reentrant``); with ``mode=None`` it runs plainly."""

    def __init__(self, width: int, inner: nn.Layer, mode):
        super().__init__()
        self.pre = nn.Linear(width, width)
        self.inner = inner
        self.post = nn.Linear(width, width)
        self.mode = mode

    def body(self, x):
        h = self.inner(paddle.tanh(self.pre(x)))
        return paddle.nn.functional.sigmoid(self.post(h))

    def forward(self, x):
        if self.mode is None:
            return self.body(x)
        return recompute(self.body, x, use_reentrant=self.mode)


def build(modes, width: int):
    """Levels from outer (``modes[0]``) to inner around a counted innermost block."""
    paddle.seed(7)
    innermost = Counting(nn.Sequential(nn.Linear(width, width), nn.Tanh(), nn.Linear(width, width)))
    model = innermost
    for mode in reversed(modes):
        model = Level(width, model, mode)
    return model, innermost


def train_step(modes, width=8, batch=3):
    """One forward + backward; returns innermost calls, x.grad and every parameter's grad."""
    model, innermost = build(modes, width)
    paddle.seed(11)
    x = paddle.randn([batch, width])
    x.stop_gradient = False
    y = model(x)
    (y * y).sum().backward()
    grads = {name: p.grad.numpy() for name, p in model.named_parameters()}
    return innermost.calls, x.grad.numpy(), grads


def assert_same_grads(got, expected):
    _, x_grad, params = got
    _, x_grad_ref, params_ref = expected
    np.testing.assert_array_equal(x_grad, x_grad_ref)
    assert params.keys() == params_ref.keys()
    for name in params_ref:
        np.testing.assert_array_equal(params[name], params_ref[name], err_msg=name)


@pytest.mark.parametrize("modes", MODE_MIXES, ids=_mix_id)
def test_nested_regions_match_no_recompute_and_recompute_inner(modes):
    depth = len(modes)
    plain = train_step((None,) * depth)
    got = train_step(modes)
    assert_same_grads(got, plain)
    assert plain[0] == 1
    # Forward once; then each enclosing level's recomputation reruns the innermost block
    # once more (it lies before each level's last saved tensor), and the innermost region's
    # own recomputation once: depth + 1 calls.  A region that did not recompute would
    # give fewer.
    assert got[0] == depth + 1


def _held_after_forward(modes, width, batch):
    model, _ = build(modes, width)
    paddle.seed(11)
    x = paddle.randn([batch, width])
    x.stop_gradient = False
    before = core.host_memory_stat_current_value("Allocated", 0)
    y = model(x)
    held = core.host_memory_stat_current_value("Allocated", 0) - before
    (y * y).sum().backward()  # the graph must still be usable
    del y
    return held


@pytest.mark.parametrize("modes", [m for m in MODE_MIXES if len(m) > 1], ids=_mix_id)
def test_nested_regions_hold_less_than_no_recompute(modes):
    width, batch = 64, 16
    activation = width * batch * 4  # bytes of one float32 activation
    depth = len(modes)
    plain = _held_after_forward((None,) * depth, width, batch)
    flat = _held_after_forward((False,) + (None,) * (depth - 1), width, batch)
    nested = _held_after_forward(modes, width, batch)
    assert nested < plain
    # A region keeps its inputs alive until backward.  Inner regions that run with grad
    # enabled in forward (all levels around them are non-reentrant; a reentrant level runs
    # its body without grad) therefore add one activation each over a single flat region;
    # their own saved activations are not held.
    live_inner = 0
    for mode in modes[:-1]:
        if mode:
            break
        live_inner += 1
    assert nested <= flat + live_inner * activation


# --------------------------------------------------------------------------- user hooks


class Recorder:
    """User hooks that round-trip saved tensors through numpy and count what they see."""

    def __init__(self):
        self.packed_shapes = []
        self.unpacked = 0

    def pack(self, t):
        self.packed_shapes.append(tuple(t.shape))
        return t.numpy().copy(), t.dtype

    def unpack(self, packed):
        self.unpacked += 1
        array, dtype = packed
        return paddle.to_tensor(array, dtype=dtype)


def _user_hook_model():
    paddle.seed(3)
    return nn.Linear(6, 5), nn.Linear(5, 4)


def _outside_and_region(lin1, lin2, x, region):
    a = paddle.exp(x)  # saves its output, shape [2, 6] (outside any region)
    h = region(lambda t: paddle.tanh(lin1(t)), a)  # shapes [2, 6] / [2, 5] inside
    return (paddle.sin(lin2(h) * 1.5) * 2).sum()  # saves [2, 5], [2, 4] ... outside


def _grads(lin1, lin2, x):
    return [x.grad.numpy()] + [p.grad.numpy() for p in (*lin1.parameters(), *lin2.parameters())]


HOOK_APIS = pytest.mark.parametrize(
    "hook_api", [pr.saved_tensors_hooks, paddle.autograd.saved_tensors_hooks], ids=["ours", "paddle"])


@HOOK_APIS
def test_user_hooks_around_a_non_reentrant_region_compose(hook_api):
    def run(region, hooks):
        lin1, lin2 = _user_hook_model()
        x = paddle.to_tensor(np.linspace(-1, 1, 12, dtype="float32").reshape(2, 6), stop_gradient=False)
        if hooks is None:
            loss = _outside_and_region(lin1, lin2, x, region)
        else:
            with hook_api(hooks.pack, hooks.unpack):
                loss = _outside_and_region(lin1, lin2, x, region)
        loss.backward()
        return _grads(lin1, lin2, x)

    plain_region = lambda f, t: f(t)  # noqa: E731
    recompute_region = lambda f, t: recompute(f, t, use_reentrant=False)  # noqa: E731

    expected = run(plain_region, None)
    everything, outside = Recorder(), Recorder()
    np.testing.assert_equal(run(plain_region, everything), expected)
    got = run(recompute_region, outside)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)

    # What the region's body saves, measured on its own under the user's hooks.
    inside = Recorder()
    lin1, _ = _user_hook_model()
    with pr.saved_tensors_hooks(inside.pack, inside.unpack):
        paddle.tanh(lin1(paddle.ones([2, 6])))
    assert inside.packed_shapes and outside.packed_shapes
    # The user's pack saw exactly the tensors saved outside the region, in order.
    remaining = list(everything.packed_shapes)
    start = remaining.index(inside.packed_shapes[0], 1)  # after exp's own saved output
    del remaining[start:start + len(inside.packed_shapes)]
    assert outside.packed_shapes == remaining
    assert outside.unpacked == len(outside.packed_shapes)


@HOOK_APIS
@pytest.mark.parametrize("use_reentrant", [True, False], ids=["reentrant", "non_reentrant"])
def test_user_hooks_inside_a_region_compose(use_reentrant, hook_api):
    def run(hooks, use_recompute):
        lin1, lin2 = _user_hook_model()
        x = paddle.to_tensor(np.linspace(-1, 1, 12, dtype="float32").reshape(2, 6), stop_gradient=False)

        def body(t):
            h = paddle.tanh(lin1(t))  # saved by the region
            if hooks is None:
                return paddle.nn.functional.sigmoid(lin2(h))
            with hook_api(hooks.pack, hooks.unpack):
                return paddle.nn.functional.sigmoid(lin2(h))  # saved through the user's hooks

        out = recompute(body, x, use_reentrant=use_reentrant) if use_recompute else body(x)
        (out * out).sum().backward()
        return _grads(lin1, lin2, x)

    expected = run(None, False)
    hooks = Recorder()
    got = run(hooks, True)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)
    assert hooks.packed_shapes  # the user's hooks really ran
    assert hooks.unpacked > 0
    assert not _hooks.active_frames()


def test_hooks_registered_directly_in_paddle_core_raise_a_clear_error_and_leave_state_clean():
    """A pair put in Paddle's slot without the class cannot be adopted: a clear error."""
    lin = nn.Linear(4, 4)
    x = paddle.randn([2, 4])
    x.stop_gradient = False
    core.eager.register_saved_tensors_hooks(lambda t: t, lambda t: t)
    try:
        with pytest.raises(RecomputeError, match=r"paddle_recompute\.saved_tensors_hooks"):
            recompute(lin, x, use_reentrant=False)
        assert not _hooks.active_frames()
    finally:
        core.eager.reset_saved_tensors_hooks()

    # Afterwards: a raw pair can be entered, and a region works and matches no recompute.
    with paddle.autograd.saved_tensors_hooks(lambda t: t, lambda t: t):
        paddle.tanh(x).sum().backward()
    x.clear_gradient()
    lin.clear_gradients()
    recompute(lambda t: paddle.tanh(lin(t)), x, use_reentrant=False).sum().backward()
    got = [x.grad.numpy(), lin.weight.grad.numpy()]
    x.clear_gradient()
    lin.clear_gradients()
    paddle.tanh(lin(x)).sum().backward()
    np.testing.assert_array_equal(got[0], x.grad.numpy())
    np.testing.assert_array_equal(got[1], lin.weight.grad.numpy())


def test_raw_pairs_pack_through_the_stack_and_nest():
    """Inside ``paddle.autograd.saved_tensors_hooks``, tensors saved after a region ends go
    through the user's pair again; a nested pair packs its own body (Paddle alone refuses a
    second pair); Paddle's slot is free once the blocks exit (NOTE [ Raw hooks ])."""
    outer, inner = Recorder(), Recorder()
    lin = nn.Linear(4, 4)
    x = paddle.randn([2, 4])
    x.stop_gradient = False
    with paddle.autograd.saved_tensors_hooks(outer.pack, outer.unpack):
        h = recompute(lin, x, use_reentrant=False)
        before = len(outer.packed_shapes)
        paddle.tanh(h).sum().backward()  # tanh saves its output through the user's pair
        assert len(outer.packed_shapes) == before + 1
        with paddle.autograd.saved_tensors_hooks(inner.pack, inner.unpack):
            paddle.exp(x).sum().backward()
        assert len(outer.packed_shapes) == before + 1 and len(inner.packed_shapes) == 1
        assert inner.unpacked == 1
    assert not _hooks.active_frames() and not _hooks.installed()
    core.eager.register_saved_tensors_hooks(lambda t: t, lambda t: t)  # the slot is free
    core.eager.reset_saved_tensors_hooks()


def test_paddles_builtin_non_reentrant_recompute_nests_inside_ours():
    """Paddle's own non-reentrant recompute enters ``paddle.autograd.saved_tensors_hooks``;
    inside our region it composes (Paddle alone cannot nest it)."""
    from paddle.distributed.fleet.utils import recompute as builtin

    def run(nest):
        paddle.seed(3)
        inner = nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.3), nn.Tanh())
        outer_lin = nn.Linear(6, 6)
        x = paddle.randn([4, 6])
        x.stop_gradient = False

        def outer(t):
            h = paddle.tanh(outer_lin(t))
            h = builtin(inner, h, use_reentrant=False) if nest else inner(h)
            return paddle.nn.functional.sigmoid(h)

        out = recompute(outer, x, use_reentrant=False) if nest else outer(x)
        (out * out).sum().backward()
        return [x.grad.numpy()] + [p.grad.numpy() for p in (*inner.parameters(), *outer_lin.parameters())]

    for got, expected in zip(run(True), run(False), strict=True):
        np.testing.assert_array_equal(got, expected)
    assert not _hooks.active_frames()


def test_raw_hook_methods_are_paddles_own_after_uninstall():
    from paddle_recompute._core import raw_hooks as _raw_hooks

    cls = paddle.autograd.saved_tensors_hooks
    assert cls.__enter__ is _raw_hooks._enter
    _raw_hooks.uninstall()
    try:
        assert cls.__enter__ is _raw_hooks._PADDLE_ENTER
        assert cls.__exit__ is _raw_hooks._PADDLE_EXIT
    finally:
        _raw_hooks.install()
