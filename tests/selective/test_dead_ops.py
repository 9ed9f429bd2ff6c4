"""A policy region's rerun leaves out the operators no needed tensor depends on (NOTE [ Dead
operators ]): gradients equal no recompute's bit for bit, the counters prove operators were
left out, and every way a left-out value could leak is caught or prevented."""

import functools
import random

import _real_models as rm
import numpy as np
import paddle
import paddle.nn.functional as F
import pytest

import paddle_recompute as pr
from paddle_recompute._core.nonreentrant import rerunning
from paddle_recompute._entry.recompute import policy_frames
from paddle_recompute._entry.routing import route_forwards
from paddle_recompute._planner.options.kinds import recompute_forward
from paddle_recompute._selective.frame import PolicyFrame
from paddle_recompute.policies import OpPolicy


class _Frame(PolicyFrame):
    """A policy frame that keeps itself and its reruns for the test to inspect."""

    __slots__ = ("reruns",)
    made: list = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.reruns = []
        _Frame.made.append(self)

    def recomputation(self, needed: set):
        rerun = super().recomputation(needed)
        self.reruns.append(rerun)
        return rerun


@pytest.fixture
def frames():
    _Frame.made = []
    with policy_frames(_Frame):
        yield _Frame.made
    _Frame.made = []


def _params(*shapes):
    paddle.seed(0)
    return [paddle.create_parameter(list(s), "float32") for s in shapes]


def _grads(fn, params, policy=None, seed=1):
    paddle.seed(seed)
    x = paddle.randn([4, 8])
    x.stop_gradient = False
    y = fn(x) if policy is None else pr.recompute(fn, x, use_reentrant=False, policy=policy)
    y = y.sum()
    y.backward()
    out = [y.numpy(), x.grad.numpy()] + [p.grad.numpy() for p in params]
    for p in params:
        p.clear_gradient()
    return out


def _assert_same(a, b):
    for u, v in zip(a, b, strict=True):
        np.testing.assert_array_equal(u, v)


def _dead(frame) -> list:
    return [k for k, op in enumerate(frame.ops) if op.dead]


W1, W2 = _params((8, 16), (16, 8))


def _chain(x):
    h = paddle.matmul(x, W1)  # 0: only tanh's input; tanh saves its output
    a = paddle.tanh(h)  # 1
    b = paddle.exp(a)  # 2
    c = b * 2.0  # 3: scale
    return paddle.matmul(c, W2)  # 4


CHAIN = ("matmul", "tanh", "exp", "scale", "matmul")


def test_dead_operators_are_left_out_and_gradients_are_exact(frames):
    ref = _grads(_chain, [W1, W2])
    _assert_same(_grads(_chain, [W1, W2], OpPolicy(CHAIN, frozenset({1}))), ref)
    (frame,) = frames
    # tanh's output is kept: the first matmul feeds nothing needed; the last one only saves
    # its inputs (before, it ran unless its slots stopped the rerun first)
    assert _dead(frame) == [0, 4]
    (rerun,) = frame.reruns
    # exp and scale ran; the rerun stopped at the last matmul's slots, before counting it
    assert (rerun.ran, rerun.skipped, rerun.left_out, rerun.op_index) == (2, 1, 1, 4)
    frames.clear()
    _assert_same(_grads(_chain, [W1, W2], OpPolicy(CHAIN)), ref)  # keeping nothing: all run
    (frame,) = frames
    assert _dead(frame) == [4] and frame.reruns[0].ran == 4


def test_python_reading_a_value_makes_its_ancestors_run(frames):
    def read(x):
        h = paddle.matmul(x, W1)  # 0
        a = paddle.tanh(h)  # 1 (kept)
        s = h.sum()  # 2: read by Python below, so it and the matmul run
        b = paddle.exp(a) if s.item() > 0 else paddle.sin(a)  # 3
        return paddle.matmul(b * 2.0, W2)

    def unread(x):
        h = paddle.matmul(x, W1)
        a = paddle.tanh(h)
        h.sum()
        return paddle.matmul(paddle.exp(a) * 2.0, W2)

    policy = OpPolicy(("matmul", "tanh", "sum", "exp", "scale", "matmul"), frozenset({1}))
    _assert_same(_grads(read, [W1, W2], policy), _grads(read, [W1, W2]))
    _assert_same(_grads(unread, [W1, W2], policy), _grads(unread, [W1, W2]))
    assert _dead(frames[0]) == [5] and frames[0].reruns[0].ran == 4  # matmul, sum, exp, scale
    assert _dead(frames[1]) == [0, 2, 5]  # nothing read: the matmul and the sum are left out
    assert frames[1].reruns[0].left_out == 2


def test_a_stand_in_reaching_a_running_operator_raises(frames):
    def strays(x):
        h = paddle.matmul(x, W1)
        a = paddle.tanh(h)
        b = paddle.exp(h if rerunning() else a)  # the rerun uses what its forward did not
        return paddle.matmul(b * 2.0, W2)

    x = paddle.randn([4, 8])
    x.stop_gradient = False
    y = pr.recompute(strays, x, use_reentrant=False, policy=OpPolicy(CHAIN, frozenset({1})))
    with pytest.raises(pr.RecomputeError, match=r"operator #2 'exp' ran in the rerun on a stand-in"):
        y.sum().backward()
    assert _dead(frames[0]) == [0, 4]


def test_reading_a_stand_in_in_the_rerun_raises(frames):
    def reads_later(x):
        h = paddle.matmul(x, W1)
        a = paddle.tanh(h)
        if rerunning():
            h.numpy()
        return paddle.matmul(paddle.exp(a) * 2.0, W2)

    x = paddle.randn([4, 8])
    x.stop_gradient = False
    y = pr.recompute(reads_later, x, use_reentrant=False, policy=OpPolicy(CHAIN, frozenset({1})))
    with pytest.raises(pr.RecomputeError, match="read the values of a tensor it did not recompute"):
        y.sum().backward()


def test_left_out_dropout_keeps_later_random_operators_exact(frames):
    def two_dropouts(x):
        h = paddle.matmul(x, W1)  # 0
        d = F.dropout(h, 0.5)  # 1: its mask and its consumer are kept, so it is left out
        e = d * 2.0  # 2 (kept)
        f = F.dropout(paddle.tanh(e), 0.5)  # 3, 4: must draw as in forward
        return paddle.matmul(f, W2)  # 5

    def policy(info):
        return info.op == "scale" or (info.op == "dropout" and info.output_index == 1)

    ref = _grads(two_dropouts, [W1, W2])
    _assert_same(_grads(two_dropouts, [W1, W2], policy), ref)
    (frame,) = frames
    assert frame.ops[1].name == "dropout" and 1 in _dead(frame) and 0 in _dead(frame)
    assert frame.reruns[0].left_out >= 2


def test_in_place_operators_run_with_their_inputs(frames):
    def in_place(x):
        h = paddle.matmul(x, W1)  # 0
        a = paddle.tanh(h)  # 1 (kept)
        v = h.reshape([-1])  # 2: a view of h
        v.scale_(2.0)  # 3: writes into h's buffer
        c = paddle.exp(a) * h  # 4, 5: multiply saves h, changed in place
        return paddle.matmul(c, W2)

    ref = _grads(in_place, [W1, W2])
    names = ("matmul", "tanh", "reshape", "scale_", "exp", "multiply", "matmul")
    _assert_same(_grads(in_place, [W1, W2], OpPolicy(names, frozenset({1}))), ref)
    (frame,) = frames
    assert [op.name for op in frame.ops[:7]] == list(names)
    assert not {0, 2, 3} & set(_dead(frame))  # the in-place write and what it needs ran


def test_llama_layers_exact_under_op_policies_with_operators_left_out(frames):
    if not rm.paddleformers_available():
        pytest.skip("needs paddleformers")
    model = rm.lm("llama", dropout=0.1, layers=2)
    blocks = rm.blocks_of(model)
    ids, labels = rm.lm_batch(0)

    def step(policy):
        paddle.seed(5)
        if policy is None:
            out = model(input_ids=ids, labels=labels)
        else:
            with route_forwards([(b, lambda f: recompute_forward(f, policy=policy)) for b in blocks]):
                out = model(input_ids=ids, labels=labels)
        loss = rm.loss_of(out)
        loss.backward()
        grads = {n: p.grad.numpy().copy() for n, p in model.named_parameters() if p.grad is not None}
        model.clear_gradients()
        return loss.numpy(), grads

    ref = step(None)
    names: list = []

    def record(info):
        if info.output_index == 0 and info.position == len(names):
            names.append(info.op)
        return False

    step(record)
    frames.clear()
    rnd = random.Random(0)
    for _ in range(3):
        keep = frozenset(j for j in range(len(names)) if rnd.random() < 0.4)
        loss, grads = step(OpPolicy(tuple(names), keep))
        np.testing.assert_array_equal(loss, ref[0])
        assert grads.keys() == ref[1].keys()
        for k in grads:
            np.testing.assert_array_equal(grads[k], ref[1][k], err_msg=k)
    reruns = [r for f in frames for r in f.reruns]
    assert len(reruns) == 6 and all(r.left_out > 0 for r in reruns)
    assert all(r.ran + r.skipped + r.left_out + r.rebuilt <= r.op_index for r in reruns)
    # the rerun before NOTE [ Dead operators ] ran every operator it passed and did not skip
    assert all(r.ran < r.op_index - r.skipped - r.rebuilt for r in reruns)


def test_operator_model_names_exactly_the_operators_the_rerun_runs(frames):
    """NOTE [ Ancestor model ]: the planner's recorded graph prices what the rerun runs."""
    if not rm.paddleformers_available():
        pytest.skip("needs paddleformers")
    from paddle_recompute import planner
    from paddle_recompute._core.layers import find_roots
    from paddle_recompute._planner.harness import Session
    from paddle_recompute._planner.options.op_profile import profile_ops
    from paddle_recompute._planner.profile.blocks import layer_table
    from paddle_recompute._planner.solvers.ops import live_ops

    model = rm.lm("llama", dropout=0.1, layers=2)
    ids, labels = rm.lm_batch(0)

    def loss(ids):
        return rm.loss_of(model(input_ids=ids, labels=labels))

    blocks = rm.blocks_of(model)
    prof = planner.profile(loss, ids, blocks=blocks, repeats=1)
    roots = find_roots(loss, (ids,), {})
    table = layer_table(loss, roots, blocks)
    graph = profile_ops(Session((loss, (ids,), {}), table, roots, prof), repeats=1)[prof.blocks[0]].graph
    assert graph.ancestors and all(o.inputs is not None for o in graph.ops)
    names = tuple(o.name for o in graph.ops)
    rnd = random.Random(1)
    for _ in range(3):
        keep = frozenset(j for j in range(len(names)) if rnd.random() < 0.4)
        stop = max((s.reach for s in graph.slots if not s.covered(keep)), default=0)
        model_runs = {j for j in live_ops(graph, keep, stop)
                      if j < stop and not (graph.ops[j].skippable and j in keep)}
        frames.clear()
        policy = OpPolicy(names, keep)
        wrap = functools.partial(recompute_forward, policy=policy)
        with route_forwards([(table[b], wrap) for b in prof.blocks]):
            out = loss(ids)
        # retain_graph: the frame keeps what its skips used, read below (without it, the
        # frame lets go of it when the backward ends: NOTE [ Inputs only for a rerun ])
        out.backward(retain_graph=True)
        model.clear_gradients()
        frame = frames[0]
        (rerun,) = frame.reruns
        runs = {k for k, op in enumerate(frame.ops[:rerun.op_index])
                if not op.dead and not (op.skippable and op.unchanged())}
        assert runs == model_runs and rerun.ran == len(runs)


def test_unobserved_writes_and_comparisons_keep_the_prefix_running(frames):
    """``h[0] = ...`` and ``h > 0.1`` are not observed operators: what they touch has an
    unknown origin, so every operator before its use runs (NOTE [ Dead operators ])."""

    def unobserved(x):
        h = paddle.matmul(x, W1)  # 0
        a = paddle.tanh(h)  # 1 (kept)
        h[0] = 0.5  # writes into h unobserved
        m = h > 0.1  # an unobserved comparison
        g = paddle.where(m, a, a * 0.0)  # 2 scale, 3 where
        return paddle.matmul(paddle.exp(g) * h, W2)  # 4 exp, 5 multiply, 6 matmul

    names = ("matmul", "tanh", "scale", "where", "exp", "multiply", "matmul")
    ref = _grads(unobserved, [W1, W2])
    _assert_same(_grads(unobserved, [W1, W2], OpPolicy(names, frozenset({1}))), ref)
    (frame,) = frames
    assert [op.name for op in frame.ops] == list(names)
    assert _dead(frame) == [6]  # not the first matmul, though tanh's output is kept
    assert frame.reruns[0].ran == 5


def test_router_with_data_dependent_shapes_runs_what_routes(frames):
    """A router (MoE-like): ``nonzero`` decides which rows go where and its count is read."""

    def route(x):
        h = paddle.matmul(x, W1)  # the router's logits and the expert's input
        a = paddle.tanh(h)  # kept
        idx = paddle.nonzero(h[:, 0] > 0).flatten()  # data-dependent shape
        picked = paddle.gather(a, idx) if int(idx.shape[0]) else a[:1]
        return paddle.matmul(paddle.exp(picked) * 2.0, W2)

    recorded: list = []

    def policy(info):
        recorded.append(info.op)
        return info.op == "tanh"

    ref = _grads(route, [W1, W2])
    _assert_same(_grads(route, [W1, W2], policy), ref)
    (frame,) = frames
    assert frame.ops[0].name == "matmul" and "nonzero" in recorded
    nonzero = next(k for k, op in enumerate(frame.ops) if op.name == "nonzero")
    assert not frame.ops[nonzero].dead  # its output's shape depends on values: it runs
    assert not frame.ops[0].dead  # the router's logits feed the routing: they run


def test_a_stand_in_kept_by_the_regions_code_is_replaced_by_the_real_value(frames):
    store = {}

    def caches(x):
        h = paddle.matmul(x, W1)  # 0: dead in the rerun (tanh's output is kept)
        store["h"] = h  # the region's code keeps it: a rerun that leaves it out stores a stand-in
        a = paddle.tanh(h)
        return paddle.matmul(paddle.exp(a) * 2.0, W2)

    ref = _grads(caches, [W1, W2])
    forward_h = store["h"].numpy()
    with pytest.warns(UserWarning, match="rerun ran again with every operator"):
        got = _grads(caches, [W1, W2], OpPolicy(CHAIN, frozenset({1})))
    _assert_same(got, ref)
    (frame,) = frames
    first, second = frame.reruns
    assert first.left_out >= 1 and second.left_out == 0  # the second rerun ran every operator
    np.testing.assert_array_equal(store["h"].numpy(), forward_h)  # the real value, not a stand-in
    assert not _dead(frame)


def test_unpacking_a_tensor_whose_maker_is_left_out(frames):
    # ``q, k, v = t`` indexes t until IndexError; forward numbers only the three calls that
    # returned, and the rerun's fourth call must raise IndexError on t's stand-in as well
    # (it once raised RecomputeError there: ViT's attention under 88 of 300 random policies)
    W3 = _params((8, 24))[0]

    def attention(x):
        t = paddle.matmul(x, W3).reshape([4, 3, 8]).transpose([1, 0, 2])  # 0, 1, 2: left out
        q, k, v = t  # 3, 4, 5 (all kept)
        p = F.softmax(paddle.matmul(q, k, transpose_y=True), -1)  # 6, 7
        return paddle.matmul(p, v)  # 8

    names = ("matmul", "reshape", "transpose", "getitem", "getitem", "getitem", "matmul", "softmax", "matmul")
    ref = _grads(attention, [W3])
    _assert_same(_grads(attention, [W3], OpPolicy(names, frozenset({3, 4, 5}))), ref)
    (frame,) = frames
    assert [op.name for op in frame.ops] == list(names)
    assert {0, 1, 2} <= set(_dead(frame))
    (rerun,) = frame.reruns
    assert rerun.left_out >= 3 and not rerun.strayed


def test_a_left_out_operator_with_an_empty_output_is_not_numbered(frames):
    """A left-out operator whose output holds no data (``flatten`` of ``nonzero``'s 0 rows:
    an expert with no tokens) gets a stand-in made unobserved: making one must not count as
    an operator of the rerun, which would shift every later call's number, run the rest on
    stand-ins and raise (a mixture of experts under an occurrence-keyed policy did)."""

    def route(x):
        h = paddle.matmul(x, W1)  # 0
        a = paddle.tanh(h)  # 1 (kept)
        picked = a
        for bound in (1e9, 0.0):  # the first finds no rows, the second some
            idx = paddle.nonzero(h[:, 0] > bound).flatten()  # getitem, nonzero (kept), flatten
            if idx.shape[0] == 0:
                continue
            picked = paddle.gather(a, idx)
        return paddle.matmul(paddle.exp(picked) * 2.0, W2)

    policy = lambda info: info.op in ("tanh", "nonzero")  # noqa: E731
    ref = _grads(route, [W1, W2])
    _assert_same(_grads(route, [W1, W2], policy), ref)
    (frame,) = frames
    empty = next(k for k, op in enumerate(frame.ops) if op.name == "flatten")
    assert frame.ops[empty].dead and frame.ops[empty].out_meta == [None]  # left out, no data
    (rerun,) = frame.reruns
    assert rerun.left_out >= 2 and not rerun.strayed
