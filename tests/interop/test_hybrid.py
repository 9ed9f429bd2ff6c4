"""recompute_hybrid in one process: Paddle's signature and ctx, this library's fixes.

A one-rank group (``Solo``) stands in for ``mp_group`` here, where ``partition`` has nothing
to split; the slicing itself is checked against a simulated two-rank gather below, and the
real thing, over gloo, in test_hybrid_parallel.py.
"""

import numpy as np
import paddle
import paddle.nn.functional as F
import pytest
from _rc_helpers import Counting, amp_state, requires_grad, seed_all, tracer_autocast
from paddle import nn

from paddle_recompute import RecomputeError, recompute_hybrid
from paddle_recompute._core.offload import HostCopy
from paddle_recompute._interop import hybrid, partition
from paddle_recompute.testing import assert_tensors_equal


class Solo:
    """A one-rank model-parallel group."""

    nranks, rank = 1, 0


class Rank:
    """Rank ``rank`` of a simulated ``nranks`` group (slicing only: no collective runs)."""

    def __init__(self, rank, nranks=2):
        self.rank, self.nranks = rank, nranks


FLAGS = [(False, False), (True, False), (False, True), (True, True)]


class Block(nn.Layer):
    """Keyword tensors, nested inputs, dropout and non-tensor outputs in one call."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x, pair, *, scale, note="n"):
        h = F.dropout(paddle.tanh(self.fc(x)), 0.5) * scale + pair[0] * pair[1]
        return {"h": h, "note": note, "count": 3, "ids": paddle.argmax(h, axis=-1)}


def run(call):
    """Seeded inputs, ``call(block, x, pair, scale)``, backward; outputs and gradients."""
    seed_all()
    block = Counting(Block())
    x, a, scale = (requires_grad(paddle.randn(shape)) for shape in ([4, 6], [4, 6], [6]))
    out = call(block, x, [a, paddle.randn([4, 6])], scale)
    (out["h"] ** 2).sum().backward()
    grads = [t.grad for t in (x, a, scale, *block.parameters())]
    return out, grads, block.calls


@pytest.mark.parametrize(("offload", "partition_on"), FLAGS)
def test_matches_plain_with_keywords_nested_inputs_and_dropout(offload, partition_on):
    ctx = {"mp_group": Solo(), "offload": offload, "partition": partition_on}
    plain, plain_grads, plain_calls = run(lambda b, x, pair, s: b(x, pair, scale=s))
    out, grads, calls = run(lambda b, x, pair, s: recompute_hybrid(ctx, b, x, pair, scale=s))
    assert (calls, plain_calls) == (2, 1)  # recomputed once in backward
    assert (out["note"], out["count"]) == ("n", 3)
    assert out["ids"].stop_gradient and out["ids"].dtype == paddle.int64
    assert_tensors_equal([out["h"], out["ids"]], [plain["h"], plain["ids"]])
    assert all(g is not None for g in grads)  # the keyword tensor `scale` included
    assert_tensors_equal(grads, plain_grads)


def test_batchnorm_statistics_update_once():
    def train(call):
        seed_all()
        model = nn.Sequential(nn.Linear(5, 5), nn.BatchNorm1D(5))
        x = requires_grad(paddle.randn([8, 5]))
        call(model, x).sum().backward()
        return [model[1]._mean.numpy(), model[1]._variance.numpy(), x.grad.numpy()]

    expected = train(lambda m, x: m(x))
    got = train(lambda m, x: recompute_hybrid({"mp_group": Solo()}, m, x))
    for a, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(a, e)


def test_no_grad_runs_plainly():
    block = Counting(nn.Linear(3, 3))
    with paddle.no_grad():
        out = recompute_hybrid({"mp_group": Solo()}, block, paddle.ones([2, 3]))
    assert out.stop_gradient and block.calls == 1


def test_a_changed_rerun_is_refused():
    shapes = iter([[2, 3], [2, 4]])
    x = requires_grad(paddle.ones([2, 3]))
    out = recompute_hybrid({"mp_group": Solo()}, lambda t: t.sum() * paddle.ones(next(shapes)), x)
    with pytest.raises(RecomputeError) as info:  # as itself, though Paddle's engine converts it
        out.sum().backward()
    assert "recompute_hybrid: output tensor 0 differs" in str(info.value)


@pytest.mark.parametrize(("offload", "partition_on", "group", "expected"), [
    (False, False, Rank(0), None),
    (True, False, Rank(0), HostCopy.of),
    (False, True, Solo(), None),  # one rank: nothing to split
    (True, True, Solo(), HostCopy.of),
])
def test_what_is_kept_of_each_input(offload, partition_on, group, expected):
    assert partition.stasher(group, offload, partition_on) == expected
    if partition_on and group.nranks > 1:
        assert isinstance(partition.stasher(group, offload, True)(paddle.ones([3])), partition.Shard)


@pytest.mark.parametrize("shape", [[3, 5], [4, 6], [1], [2, 3, 7]])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int64", "bool"])
@pytest.mark.parametrize("offload", [False, True])
@pytest.mark.parametrize("nranks", [2, 3])
def test_slices_pad_and_gather_back_exactly(monkeypatch, shape, dtype, offload, nranks):
    t = (paddle.arange(int(np.prod(shape))) % 5).astype(dtype).reshape(shape)
    t.stop_gradient = dtype not in ("float32", "bfloat16")
    shards = [partition.stasher(Rank(r, nranks), offload, True)(t) for r in range(nranks)]
    numel = int(np.prod(shape))
    size = -(-numel // nranks)
    assert [s.nbytes for s in shards] == [size * t.element_size()] * nranks  # 1/n each, padded

    def gather(out, part, group, sync_op, use_calc_stream):  # what the other ranks send
        assert group is shards[0].group and sync_op
        paddle.assign(paddle.concat([s.part for s in shards]), out)

    monkeypatch.setattr(partition.dist.stream, "all_gather", gather)
    back = shards[0].restore()
    assert back.shape == t.shape and back.dtype == t.dtype and back.stop_gradient == t.stop_gradient
    np.testing.assert_array_equal(back.astype("float32").numpy(), t.astype("float32").numpy())


def test_empty_inputs_are_kept_whole():
    empty = paddle.zeros([0, 4])
    assert partition.stasher(Rank(0), False, True)(empty) is empty
    assert isinstance(partition.stasher(Rank(0), True, True)(empty), HostCopy)


@pytest.mark.parametrize(("ctx", "error", "match"), [
    ([("mp_group", Solo())], TypeError, "must be a dict"),
    ({}, ValueError, r"ctx\['mp_group'\] is required.*get_model_parallel_group"),
    ({"mp_group": None}, ValueError, "is required"),
    ({"mp_group": Solo(), "offlaod": True}, ValueError, r"unknown ctx key\(s\) \['offlaod'\]"),
    ({"mp_group": Solo(), "offload": 1}, TypeError, r"ctx\['offload'\] must be True or False"),
    ({"mp_group": Solo(), "partition": "yes"}, TypeError, r"ctx\['partition'\] must be True or False"),
    ({"mp_group": object()}, TypeError, "must be a process group with `nranks` and `rank`"),
    ({"mp_group": Rank(-1), "partition": True}, ValueError, "needs this process in"),
])
def test_bad_ctx_is_refused_before_any_work(ctx, error, match):
    block = Counting(nn.Linear(3, 3))
    with pytest.raises(error, match=match):
        recompute_hybrid(ctx, block, requires_grad(paddle.ones([2, 3])))
    assert block.calls == 0


def test_function_must_be_callable():
    with pytest.raises(TypeError, match="`function` must be callable"):
        recompute_hybrid({"mp_group": Solo()}, "block", paddle.ones([2]))


def test_runs_on_the_reentrant_mechanism(monkeypatch):
    seen = []
    original = hybrid.run_reentrant

    def spy(*args, **kwargs):
        seen.append(kwargs)
        return original(*args, **kwargs)

    monkeypatch.setattr(hybrid, "run_reentrant", spy)
    x = requires_grad(paddle.ones([1, 2]))
    recompute_hybrid({"mp_group": Rank(0), "offload": True}, nn.Linear(2, 2), x)
    assert len(seen) == 1 and seen[0]["stash"] == HostCopy.of and seen[0]["preserve_rng_state"]


def test_the_recomputation_sees_the_forward_autocast_state():
    seen = []

    def probe(x):
        seen.append(amp_state())
        return paddle.tanh(x)

    outside = amp_state()
    with tracer_autocast():
        inside = amp_state()
        out = recompute_hybrid({"mp_group": Solo()}, probe, requires_grad(paddle.ones([2, 3])))
    out.sum().backward()  # outside the autocast context
    assert seen == [inside, inside] and inside != outside
    assert amp_state() == outside


def test_docstring_example_runs():
    import doctest

    result = doctest.testmod(hybrid, optionflags=doctest.ELLIPSIS)
    assert result.attempted and not result.failed
