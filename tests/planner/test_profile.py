"""profile(): exact byte counts on hand-computed models, allocator agreement, no side effects."""

import json

import numpy as np
import paddle
import pytest
from _rc_helpers import RunCount
from paddle import nn
from paddle.base import core

import paddle_recompute as pr
from paddle_recompute._core import hooks as _hooks


def _mlp():
    # saved for backward (x is an input and weights are parameters: alive anyway, not counted):
    #   ReLU: its output [3, 8] f32 = 96 B; Dropout: its mask [3, 8] uint8 = 24 B;
    #   the last Linear: its input (the dropout output) [3, 8] f32 = 96 B.  Total 216 B.
    paddle.seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 2))


def _x(shape=(3, 4)):
    x = paddle.randn(list(shape))
    x.stop_gradient = False
    return x


def test_hand_computed_bytes():
    prof = pr.planner.profile(_mlp(), _x(), blocks=["1", "2", "3"], repeats=1)
    assert prof.total_bytes == 216
    saved = {name: row.saved_bytes for name, row in prof.layers.items()}
    assert saved == {"": 216, "0": 0, "1": 96, "2": 24, "3": 96}
    assert [(s.layer, s.shape, s.dtype, s.nbytes) for s in prof.saved] == [
        ("1", (3, 8), "float32", 96), ("2", (3, 8), "uint8", 24), ("3", (3, 8), "float32", 96)]
    assert prof.outside_bytes == 0
    # input_bytes leave out what is alive anyway: x is the caller's
    assert prof.layers["0"].input_bytes == 0 and prof.layers["0"].output_bytes == 96
    assert prof.layers["1"].input_bytes == 96


def test_tensor_saved_twice_counts_once_and_created_leaves_count():
    # relu's output is saved by relu and by the matmul: counted once, for relu
    def fn(x):
        y = nn.functional.relu(x)
        w = paddle.ones([4, 2])  # created inside: a leaf, but alive only through the graph
        w.stop_gradient = False
        return paddle.matmul(y, w) * y.sum()

    prof = pr.planner.profile(fn, _x(), blocks=[], repeats=1)
    # relu's output [3, 4] f32: 48 B once (relu and matmul save it); w [4, 2] f32: 32 B;
    # the multiply saves both operands: the matmul output [3, 2] f32 24 B and the sum 4 B
    assert prof.total_bytes == 48 + 32 + 24 + 4
    assert [s.nbytes for s in prof.saved] == [48, 32, 24, 4]


def test_float64_element_size():
    lin = nn.Linear(4, 4)
    lin.to(dtype="float64")
    x = _x().astype("float64")
    prof = pr.planner.profile(nn.Sequential(lin, nn.Tanh()), x, blocks=[], repeats=1)
    assert prof.total_bytes == 3 * 4 * 8  # tanh saves its float64 output


def _held_after(fn, *args):
    before = core.host_memory_stat_current_value("Allocated", 0)
    out = fn(*args)
    return core.host_memory_stat_current_value("Allocated", 0) - before, out


def test_matches_allocator_on_a_transformer():
    from paddle_recompute._bench import harness as gpt_model

    cfg = gpt_model.GPTConfig(vocab=128, hidden=64, heads=4, blocks=3, seq=64, batch=4)
    model, _ = gpt_model.build(cfg, "none")
    tokens, _ = gpt_model.synthetic_batch(cfg, 0)
    prof = pr.planner.profile(model, tokens, repeats=1)
    assert prof.blocks == ["blocks.0", "blocks.1", "blocks.2"]
    held, out = _held_after(model, tokens)
    counted = prof.total_bytes + out.size * out.element_size()
    # the host allocator counts requested bytes; allow 1% for allocations it rounds or
    # caches (measured: equal to the byte on Paddle 3.3.1 CPU)
    assert abs(held - counted) <= 0.01 * held, (held, counted)


class Counted(nn.Layer):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    calls = RunCount()  # forward runs, reruns included

    def forward(self, x):
        self.calls += 1
        return nn.functional.gelu(self.lin(x))


def test_times_and_rerun_counted():
    model = nn.Sequential(Counted(), Counted())
    prof = pr.planner.profile(model, _x((4, 8)), repeats=2)
    assert prof.blocks == ["0", "1"]
    # each run: a forward and one timed re-run of the first block; the second is alike (one
    # class, same parameter and input shapes): it runs in the first run only, to count its
    # bytes, and takes the first's times (NOTE [ Alike calls ])
    assert [b.calls for b in model] == [4, 1]
    for row in prof.block_profiles():
        assert row.forward_s > 0 and row.recompute_s > 0 and row.calls == 1
    assert prof.layers["0"].recompute_s == prof.layers["1"].recompute_s
    assert prof.layers["0"].forward_s == prof.layers["1"].forward_s
    assert prof.calls["1.lin"].forward_s == prof.calls["0.lin"].forward_s
    assert prof.layers["0.lin"].recompute_s is not None  # direct sublayers of blocks too
    assert prof.forward_s > 0


class _Stack(nn.Layer):
    """Blocks inside a Sequential inside a layer, under a head: the calls around the blocks."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(Counted(), Counted(), Counted())
        self.head = nn.Linear(8, 8)

    def forward(self, x):
        return self.head(self.body(x))


def test_calls_around_blocks_sum_their_reruns():
    # NOTE [ Reruns around blocks ]: the stack and its Sequential are not rerun to time them
    # (that would run every block again, each profile run); their rerun time is their own
    # time outside their child calls plus the children's rerun times
    model = nn.Sequential(_Stack())
    prof = pr.planner.profile(model, _x((4, 8)), repeats=1)
    assert prof.blocks == ["0.body.0", "0.body.1", "0.body.2"]
    # one forward of each block and one timed rerun of the first (the others are alike)
    assert [b.calls for b in model[0].body] == [2, 1, 1]
    for call in ("0", "0.body"):
        row = prof.calls[call]
        kids = [prof.calls[c] for c in row.children]
        own = max(row.forward_s - sum(k.forward_s for k in kids), 0.0)
        assert row.recompute_s == own + sum(k.recompute_s for k in kids) > 0


def test_calls_unlike_are_rerun_each():
    # other parameters (no bias) or another mode: re-run on their own; the alike one is not
    wide = Counted()
    wide.lin = nn.Linear(8, 8, bias_attr=False)
    evaluated = Counted()
    evaluated.eval()
    model = nn.Sequential(Counted(), wide, evaluated, Counted())
    pr.planner.profile(model, _x((4, 8)), repeats=2)
    assert [b.calls for b in model] == [4, 4, 4, 1]  # the last: alike to the first, timed by it


def test_no_side_effects_on_rng_buffers_forward_or_hooks():
    paddle.seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1D(4), nn.Dropout(0.5), nn.Linear(4, 4))
    x = _x((6, 4))
    mean = model[1]._mean.numpy().copy()
    rng = paddle.get_rng_state()
    pr.planner.profile(model, x, blocks=["2", "3"], repeats=2)
    np.testing.assert_array_equal(model[1]._mean.numpy(), mean)
    assert all("forward" not in layer.__dict__ for layer in model.sublayers(include_self=True))
    assert not _hooks.active_frames()
    after = paddle.get_rng_state()
    paddle.set_rng_state(rng)
    reference = model(x).numpy()
    paddle.set_rng_state(after)
    np.testing.assert_array_equal(model(x).numpy(), reference)


def test_error_inside_forward_restores_everything():
    class Boom(nn.Layer):
        def forward(self, x):
            raise RuntimeError("boom")

    model = nn.Sequential(nn.Linear(4, 4), Boom())
    with pytest.raises(RuntimeError, match="boom"):
        pr.planner.profile(model, _x(), blocks=["0"])
    assert all("forward" not in layer.__dict__ for layer in model.sublayers(include_self=True))
    assert not _hooks.active_frames() and paddle.is_grad_enabled()


def test_result_formats():
    prof = pr.planner.profile(_mlp(), _x(), blocks=["1"], repeats=1)
    data = json.loads(prof.to_json())
    assert data["total_bytes"] == 216 and data["blocks"] == ["1"]
    assert data["layers"]["1"]["saved_bytes"] == 96
    text = str(prof)
    assert "ReLU" in text and "*" in text and "total saved for backward" in text


@pytest.mark.parametrize("kwargs, error, match", [
    ({"blocks": ["nope"]}, ValueError, "'nope' is not a sublayer"),
    ({"blocks": ["", "1"]}, ValueError, "nested inside"),
    ({"blocks": ["1", "1"]}, ValueError, "listed twice"),
    ({"blocks": "1"}, TypeError, "list of Layers"),
    ({"blocks": [3]}, TypeError, "Layers or names"),
    ({"blocks": [nn.ReLU()]}, ValueError, "not part of the profiled model"),
    ({"repeats": 0}, ValueError, "repeats"),
])
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        pr.planner.profile(_mlp(), _x(), **kwargs)


def test_no_repeated_blocks_still_profiles_every_call():
    """Without repeated blocks there are none, and every call inside is a row of the call
    tree with its re-run timed (the planner's regions)."""
    model = _mlp()
    prof = pr.planner.profile(model, _x(), repeats=1)
    assert prof.blocks == []
    assert set(prof.calls) == {name for name, _ in model.named_sublayers(include_self=True)}
    assert all(c.recompute_s > 0 for c in prof.calls.values() if c.parent is not None)


def test_block_not_called():
    model = _mlp()
    spare = nn.Linear(2, 2)
    model.add_sublayer("spare", spare)
    with pytest.raises(ValueError, match="spare' was not called"):
        pr.planner.profile(lambda x: model[3](model[2](model[1](model[0](x)))), _x(), blocks=[spare])


def test_not_callable():
    with pytest.raises(TypeError, match="must be a Layer or a function"):
        pr.planner.profile(3)


def test_call_key_tells_calls_apart():
    from paddle_recompute._planner.profile.alike import call_key

    a, b = nn.Linear(4, 4), nn.Linear(4, 4)
    x = paddle.randn([2, 4])
    assert call_key(a, (x,), {}) == call_key(b, (paddle.randn([2, 4]),), {})
    assert call_key(a, (x,), {}) != call_key(a, (paddle.randn([3, 4]),), {})
    assert call_key(a, (x,), {}) != call_key(nn.Linear(4, 5), (x,), {})
    assert call_key(a, (x,), {"flag": 1}) != call_key(a, (x,), {"flag": 2})
    assert call_key(a, (x.astype("float64"),), {}) != call_key(a, (x,), {})
    assert call_key(a, (x, object()), {}) is None
