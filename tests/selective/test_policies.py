"""Selective recompute (``recompute(..., policy=...)``): parity, skipping, memory, errors."""

import gc

import numpy as np
import paddle
import paddle.nn.functional as F
import pytest
from _op_counts import counting_ops
from _rc_helpers import assert_matches_plain, requires_grad
from paddle import _C_ops, nn
from paddle.base import core

import paddle_recompute as pr
from paddle_recompute import RecomputeError, policies, recompute
from paddle_recompute._core import hooks as _hooks
from paddle_recompute._core import ops as _ops

POLICIES = {
    "recompute_all": policies.recompute_all,
    "save_all": policies.save_all,
    "save_matmuls": policies.save_matmuls,
    "save_matmuls_no_batch": policies.save_matmuls_no_batch,
    "save_all_but_attention_core": policies.save_all_but_attention_core,
    "save_matmuls_except_scores": policies.save_matmuls_except_scores,
    "except_scores+masks": policies.save_any_of(policies.save_matmuls_except_scores,
                                                policies.save_dropout_masks),
    "offload_matmuls": policies.offload(policies.save_matmuls),
    "any_of": policies.save_any_of(policies.save_names("h"), policies.save_matmuls_no_batch),
}


class Attention(nn.Layer):
    """Linear projections, batched QK^T and PV matmuls, softmax, two dropouts, LayerNorm, GELU."""

    def __init__(self, width=8, heads=2, p=0.2):
        super().__init__()
        self.heads = heads
        self.ln = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.drop = nn.Dropout(p)
        self.fc = nn.Linear(width, 2 * width)
        self.out_drop = nn.Dropout(p)

    def forward(self, x, *, scale=1.0):
        b, s, w = x.shape
        qkv = self.qkv(self.ln(x)).reshape([b, s, 3, self.heads, w // self.heads])
        q, k, v = qkv.transpose([2, 0, 3, 1, 4]).unbind(0)
        probs = self.drop(F.softmax(paddle.matmul(q, k, transpose_y=True) * scale, axis=-1))
        h = pr.tag(paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([b, s, w]), "h")
        x = x + self.proj(h)
        return x + self.out_drop(F.gelu(self.fc(x))).reshape([b, s, 2, w]).sum(axis=2)


def make_attention(keyword=False):
    def make():
        layer = Attention()
        x = requires_grad(paddle.randn([2, 5, 8]))
        leaves = [x, *layer.parameters()]
        if keyword:
            return (lambda *, x, scale: layer(x, scale=scale)), (), {"x": x, "scale": 0.5}, leaves
        return layer, (x,), {"scale": 0.5}, leaves
    return make


@pytest.mark.parametrize("keyword", [False, True], ids=["positional", "keyword"])
@pytest.mark.parametrize("early_stop", [True, False])
@pytest.mark.parametrize("name", list(POLICIES))
def test_parity_with_dropout(name, early_stop, keyword):
    assert_matches_plain(make_attention(keyword), use_reentrant=False, early_stop=early_stop,
                         policy=POLICIES[name])


@pytest.mark.parametrize("name", ["save_matmuls", "save_all", "recompute_all"])
def test_parity_conv_bmm_einsum(name):
    def make():
        conv = nn.Conv2D(2, 3, 3, padding=1)

        def f(x, w):
            h = F.relu(conv(x)).reshape([2, 3, 16])
            g = paddle.bmm(h, paddle.tanh(h).transpose([0, 2, 1]))
            return paddle.einsum("bij,jk->bik", paddle.exp(g * 0.01), w)

        x, w = requires_grad(paddle.randn([2, 2, 4, 4])), requires_grad(paddle.randn([3, 4]))
        return f, (x, w), {}, [x, w, *conv.parameters()]

    assert_matches_plain(make, use_reentrant=False, policy=POLICIES[name])


@pytest.mark.parametrize("name", ["save_matmuls", "save_all", "recompute_all"])
def test_parity_multi_layer_rnn_with_an_input_that_holds_no_memory(name):
    """Paddle's ``rnn`` operator takes a ``DropoutState`` tensor that holds no memory on the
    CPU; matching saved tensors to an operator's inputs must not read its address."""
    def make():
        lstm = nn.LSTM(3, 4, num_layers=2, dropout=0.5)
        x = requires_grad(paddle.randn([2, 3, 3]))
        return lstm, (x,), {}, [x, *lstm.parameters()]

    assert_matches_plain(make, use_reentrant=False, policy=POLICIES[name])


def test_these_apis_reach_c_ops():
    """The premise of op observation: Paddle's layers call their kernels through _C_ops."""
    seen = []

    def record(info):
        seen.append(info.op)
        return False

    def f(x):
        w = paddle.ones([4, 4])
        y = F.linear(x, w) + paddle.matmul(x, w)
        y = F.dropout(F.gelu(F.softmax(y, axis=-1)), 0.1)
        y = F.layer_norm(y, [4]) + paddle.bmm(y.unsqueeze(0), w.unsqueeze(0))[0]
        y = paddle.einsum("ij,jk->ik", y, w)
        return F.conv2d(y.reshape([1, 1, 4, 4]), paddle.ones([1, 1, 3, 3]))

    recompute(f, requires_grad(paddle.randn([4, 4])), use_reentrant=False, policy=record)
    for op in ("linear", "matmul", "softmax", "dropout", "gelu", "layer_norm", "bmm", "einsum",
               "conv2d", "reshape"):
        assert op in seen
    assert "add" in seen  # ``y + z`` is Tensor.__add__, a C method: observed on the class


def test_policy_info_fields():
    infos = []
    lin = nn.Linear(4, 6)

    def record(info):
        infos.append((info.op, info.name, info.output_index, info.shape, info.dtype, info.nbytes,
                      info.input_shapes))
        return False

    recompute(lambda x: pr.tag(lin(x), "out").tanh(), requires_grad(paddle.randn([3, 4])),
              use_reentrant=False, policy=record)
    assert infos[0] == ("linear", None, 0, (3, 6), paddle.float32, 72, ((3, 4), (4, 6), (6,)))
    assert infos[1] == ("linear", "out", *infos[0][2:])  # asked again once tagged
    assert infos[2][0] == "tanh"


# --------------------------------------------------------------------------- skipping


def _step(layer, policy, x, **options):
    out = recompute(layer, x, use_reentrant=False, policy=policy, **options)
    (out * out).sum().backward()


def mlp_block():
    return nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 8), nn.Tanh())


@pytest.mark.parametrize("policy, expected", [
    (policies.recompute_all, {"linear": 4, "gelu": 2, "tanh": 2}),
    (policies.save_matmuls, {"linear": 2, "gelu": 2, "tanh": 2}),  # linears skipped
    (policies.save_matmuls_no_batch, {"linear": 2, "gelu": 2, "tanh": 2}),
    (policies.save_all, {"linear": 2, "gelu": 1, "tanh": 1}),  # nothing to recompute: no rerun
])
def test_kept_operators_are_not_executed_again(policy, expected):
    with counting_ops("linear", "gelu", "tanh") as counts:
        _step(mlp_block(), policy, requires_grad(paddle.randn([4, 8])))
    assert dict(counts) == expected


def test_only_expanding_batched_matmuls_rerun_under_except_scores():
    # heads 2 of width 4, sequence 5: Q·Kᵀ makes 5x5 from 5x4 operands (expands: rerun),
    # scores·V makes 5x4 from a 5x5 one (kept, skipped)
    with counting_ops("matmul", "linear") as counts:
        _step(Attention(p=0.0), policies.save_matmuls_except_scores, requires_grad(paddle.randn([2, 5, 8])))
    assert counts == {"matmul": 3, "linear": 3}


@pytest.mark.parametrize("shapes, out, kept", [
    (((2, 4, 5, 4), (2, 4, 5, 4)), (2, 4, 5, 5), False),  # scores: larger than either input
    (((2, 4, 5, 5), (2, 4, 5, 4)), (2, 4, 5, 4), True),   # scores·V
    (((2, 5, 8), (8, 24)), (2, 5, 24), True),             # a weight matmul
])
def test_except_scores_decides_on_shapes(shapes, out, kept):
    info = policies.PolicyInfo("matmul", None, 0, paddle.zeros(out), shapes)
    assert policies.save_matmuls_except_scores(info) is kept


def test_batched_matmuls_rerun_under_no_batch_policy():
    with counting_ops("matmul", "linear") as counts:
        _step(Attention(p=0.0), policies.save_matmuls_no_batch, requires_grad(paddle.randn([2, 5, 8])))
    assert counts == {"matmul": 4, "linear": 3}  # QK^T and PV twice, the linears once
    with counting_ops("matmul", "linear") as counts:
        _step(Attention(p=0.0), policies.save_matmuls, requires_grad(paddle.randn([2, 5, 8])))
    assert counts == {"matmul": 2, "linear": 3}


class TwoDropouts(nn.Layer):
    def __init__(self):
        super().__init__()
        self.l1, self.l2 = nn.Linear(8, 16), nn.Linear(16, 12)
        self.d1, self.d2 = nn.Dropout(0.5), nn.Dropout(0.5)

    def forward(self, x):
        return self.d2(self.l2(F.gelu(self.d1(self.l1(x)))))


def keep_all_but_gelu_and_last_dropout(info):
    return info.op != "gelu" and not (info.op == "dropout" and info.shape[-1] == 12)


@pytest.mark.parametrize("preserve", [True, False])
def test_kept_random_op_is_skipped_and_advances_the_generator(preserve):
    def run(mode):
        paddle.seed(5)
        layer, x = TwoDropouts(), requires_grad(paddle.randn([4, 8]))
        if mode is None:
            out = layer(x)
        else:
            out = recompute(layer, x, use_reentrant=False, policy=keep_all_but_gelu_and_last_dropout,
                            preserve_rng_state=preserve)
        (out * out).sum().backward()
        return [x.grad.numpy()] + [p.grad.numpy() for p in layer.parameters()]

    expected = run(None)
    with counting_ops("dropout", "linear") as counts:
        grads = run("policy")
    if preserve:  # d1 skipped (generator set to its post-op state), d2 drew the forward mask
        assert counts == {"dropout": 3, "linear": 2}
        for g, e in zip(grads, expected, strict=True):
            np.testing.assert_array_equal(g, e)
    else:  # no replayed RNG: random ops are never skipped
        assert counts == {"dropout": 4, "linear": 2}


def test_skipping_in_repeated_backward():
    layer = mlp_block()
    x = requires_grad(paddle.randn([4, 8]))
    with counting_ops("linear") as counts:
        out = recompute(layer, x, use_reentrant=False, policy=policies.save_matmuls)
        out.sum().backward(retain_graph=True)
        first = x.grad.numpy()
        out.sum().backward()
    assert counts["linear"] == 2
    np.testing.assert_array_equal(x.grad.numpy(), 2 * first)


def test_plain_regions_never_install_the_wrappers():
    states = []
    recompute(lambda x: states.append(_ops.is_installed()) or paddle.tanh(x),
              requires_grad(paddle.randn([2])), use_reentrant=False).sum().backward()
    assert states == [False, False]


@pytest.mark.parametrize("outer_policy, inner_policy", [
    (policies.save_matmuls, None), (None, policies.save_matmuls),
    (policies.save_matmuls_no_batch, policies.recompute_all),
])
def test_nesting_with_plain_regions(outer_policy, inner_policy):
    def make():
        inner, lin = Attention(), nn.Linear(8, 8)

        def outer(x):
            h = paddle.tanh(lin(x))
            return lin(recompute(inner, h, use_reentrant=False, policy=inner_policy))

        x = requires_grad(paddle.randn([2, 5, 8]))
        return (lambda t: recompute(outer, t, use_reentrant=False, policy=outer_policy)), (x,), {}, \
            [x, *inner.parameters(), *lin.parameters()]

    assert_matches_plain(make)
    assert not _ops.is_installed()


# --------------------------------------------------------------------------- names


def test_save_names_keeps_and_skips_the_tagged_operator():
    lin1, lin2 = nn.Linear(8, 8), nn.Linear(8, 8)

    def f(x):
        return lin2(paddle.tanh(pr.tag(lin1(x), "first")))

    with counting_ops("linear") as counts:
        _step(f, policies.save_names("first"), requires_grad(paddle.randn([3, 8])))
    # the forward's two; the rerun skips lin1 (kept) and stops before lin2, whose saved
    # input is all its backward needs (NOTE [ Unreachable outputs ])
    assert counts["linear"] == 2


def test_tag_outside_a_region_is_identity():
    x = paddle.randn([2])
    assert pr.tag(x, "x") is x


def test_names_not_tagged_raise():
    with pytest.raises(RecomputeError, match=r"named \['missing'\].*tag\(tensor, name\)"):
        recompute(paddle.tanh, requires_grad(paddle.randn([2])), use_reentrant=False,
                  policy=policies.save_names("missing"))
    assert not _ops.is_installed() and not _hooks.active_frames()


# --------------------------------------------------------------------------- memory


def _allocated():
    return core.host_memory_stat_current_value("Allocated", 0)


def _held(policy, depth=6, width=128, batch=64, **options):
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.Tanh(), nn.Linear(width, width), nn.GELU()]
    model = nn.Sequential(*layers)
    x = requires_grad(paddle.randn([batch, width]))
    gc.collect()
    gc.disable()
    try:
        before = _allocated()
        out = model(x) if policy == "none" else recompute(model, x, use_reentrant=False, policy=policy,
                                                          **options)
        held = _allocated() - before
    finally:
        gc.enable()
    out.sum().backward()
    return held


def test_held_bytes_follow_the_policy():
    none, save_all = _held("none"), _held(policies.save_all)
    matmuls, nothing = _held(policies.save_matmuls), _held(policies.recompute_all)
    out = 64 * 128 * 4  # one activation; each bound below allows one more (allocator slack)
    # Plain: per Linear-Tanh-Linear-GELU group, tanh's output, the second linear's output
    # and gelu's output are saved (18 activations); save_matmuls keeps the 12 linear
    # outputs (+ the region output) and recomputes tanh and gelu from them.
    assert abs(none - 18 * out) <= out
    assert abs(matmuls - 13 * out) <= out
    assert nothing <= 2 * out
    # save_all keeps every saved tensor, so no rerun can need anything: the outputs it
    # kept that nobody saved (the first linear's) are released when the forward ends
    # (NOTE [ Unreachable outputs ]), and it holds what plain holds.
    assert abs(save_all - 18 * out) <= out
    # Without early stop too: the first linear's outputs died in forward before anything
    # could need them, and were let go then (NOTE [ Kept outputs let go ]).
    assert abs(_held(policies.save_all, early_stop=False) - 18 * out) <= out
    # A policy that does not say it keeps everything but keeps every saved tensor holds the
    # first linear's outputs (24) only until its forward ends: no handle is alive then, so
    # no rerun can come, and what only a rerun would use goes (NOTE [ Inputs only for a
    # rerun ]); save_matmuls above still holds what it was told to (13, rerun to come).
    keep_all = policies.save_any_of(policies.save_matmuls, lambda info: True)
    assert abs(_held(keep_all, early_stop=False) - 18 * out) <= out


# --------------------------------------------------------------------------- errors


def test_policy_must_be_callable():
    with pytest.raises(TypeError, match="`policy` must be a callable"):
        recompute(paddle.tanh, paddle.randn([2]), use_reentrant=False, policy="save_matmuls")


def test_policy_needs_non_reentrant():
    with pytest.raises(ValueError, match="use_reentrant=False"):
        recompute(paddle.tanh, paddle.randn([2]), use_reentrant=True, policy=policies.save_matmuls)


@pytest.mark.parametrize("factory, args, error", [
    (policies.save_names, (), ValueError), (policies.save_names, (1,), TypeError),
    (policies.save_any_of, ("x",), TypeError), (policies.offload, (3,), TypeError),
])
def test_factories_check_arguments(factory, args, error):
    with pytest.raises(error):
        factory(*args)


def test_tag_checks_arguments():
    with pytest.raises(TypeError, match="paddle.Tensor"):
        pr.tag([1.0], "x")
    with pytest.raises(TypeError, match="string"):
        pr.tag(paddle.ones([1]), 3)


def _restored():
    return (not _ops.is_installed() and _C_ops.matmul is _ops.ORIGINALS["matmul"]
            and _C_ops.linear is _ops.ORIGINALS["linear"] and not _hooks.active_frames())


def test_c_ops_restored_after_an_error_in_forward():
    lin = nn.Linear(4, 4)

    def f(x):
        lin(x)
        raise KeyError("boom")

    with pytest.raises(KeyError):
        recompute(f, requires_grad(paddle.randn([2, 4])), use_reentrant=False, policy=policies.save_matmuls)
    assert _restored()


def test_c_ops_restored_after_an_error_in_the_policy():
    def bad(info):
        raise ZeroDivisionError("policy")

    with pytest.raises(ZeroDivisionError):
        recompute(paddle.tanh, requires_grad(paddle.randn([2])), use_reentrant=False, policy=bad)
    assert _restored()


def test_c_ops_restored_after_an_error_in_recomputation():
    lin = nn.Linear(4, 4)
    calls = []

    def f(x):
        calls.append(1)
        if len(calls) > 1:
            raise KeyError("rerun")
        return paddle.tanh(lin(x))

    out = recompute(f, requires_grad(paddle.randn([2, 4])), use_reentrant=False, policy=policies.save_matmuls)
    with pytest.raises((KeyError, OSError, RuntimeError)):
        out.sum().backward()
    paddle.set_grad_enabled(True)
    assert _restored()


def test_docstring_examples_run():
    import doctest

    from paddle_recompute._entry import presets as _presets
    from paddle_recompute._selective import no_recompute as _no_recompute
    from paddle_recompute._selective import save_on_cpu as _save_on_cpu
    from paddle_recompute._selective import tag as _tag

    for module in (policies, _tag, _no_recompute, _presets, _save_on_cpu):
        result = doctest.testmod(module)
        assert result.attempted and not result.failed, module.__name__



def test_tagging_a_tensor_made_outside_c_ops():
    """``x * 2`` bypasses _C_ops: the tensor is kept, its producer simply reruns."""
    def make():
        lin = nn.Linear(4, 4)

        def f(x):
            return paddle.tanh(lin(pr.tag(paddle.exp(x) * 2, "doubled")))

        x = requires_grad(paddle.randn([3, 4]))
        return f, (x,), {}, [x, *lin.parameters()]

    assert_matches_plain(make, use_reentrant=False, policy=policies.save_names("doubled"))


def test_debug_traces_with_a_policy():
    assert_matches_plain(make_attention(), use_reentrant=False, debug=True, policy=policies.save_matmuls)


@pytest.mark.parametrize("early_stop", [True, False])
def test_a_kept_output_no_rerun_reaches_is_released(early_stop):
    # fc2's output is kept by the policy but saved by nobody (dropout saves its mask, kept
    # too), and fc2's saved input is the last tensor a rerun needs: the rerun stops before
    # fc2, so its output is freed when the forward ends (NOTE [ Unreachable outputs ]).
    model = nn.Sequential(nn.Linear(128, 512), nn.GELU(), nn.Linear(512, 128), nn.Dropout(0.5))
    policy = policies.save_any_of(policies.save_matmuls, policies.save_dropout_masks)
    x = requires_grad(paddle.randn([64, 128]))
    gc.collect()
    before = _allocated()
    with counting_ops("linear") as counts:
        out = recompute(model, x, use_reentrant=False, policy=policy, early_stop=early_stop)
        held = _allocated() - before - 64 * 128 * 4  # less the output
        out.sum().backward()
    act, mask = 64 * 512 * 4, 64 * 128  # fc1's output (kept, gelu's input); dropout's mask
    fc2_out = 64 * 128 * 4
    expected = act + mask + (0 if early_stop else fc2_out)
    assert abs(held - expected) < fc2_out // 2
    # forward 2; the rerun reruns no linear (fc1 kept); without early stop it skips fc2
    # through its kept output
    assert counts["linear"] == 2


def _scaled_exps(x, n=4):
    for _ in range(n):
        x = paddle.exp(paddle.scale(x, 0.01))  # exp saves its output, scale nothing
    return x


def _forward_peak(fn, x) -> int:
    gc.collect()
    before = _allocated()
    core.host_memory_stat_reset_peak_value("Allocated", 0)
    out = fn(x)
    peak = core.host_memory_stat_peak_value("Allocated", 0) - before
    out.sum().backward()
    return peak


def test_a_region_keeping_everything_peaks_as_the_plain_forward():
    # NOTE [ Kept outputs let go ]: the scale outputs die in forward and nothing can need
    # them, so they are freed as the plain forward frees them (held to the forward's end,
    # the region peaked three of them higher); and no rerun runs.
    x = requires_grad(paddle.randn([256, 256]))
    plain = _forward_peak(_scaled_exps, x)
    with counting_ops() as counts:
        kept = _forward_peak(lambda t: recompute(_scaled_exps, t, use_reentrant=False,
                                                 policy=policies.save_all), x)
    assert kept == plain
    assert counts == {"scale": 4, "exp": 4}


# --------------------------------------------------------------------------- policy values


def test_parametrized_policies_are_frozen_values_with_a_readable_repr():
    import dataclasses

    named = policies.save_names("qkv", "attn_out")
    both = policies.save_any_of(policies.save_matmuls, named)
    off = policies.offload(both)
    assert repr(named) == "policies.save_names('attn_out', 'qkv')"
    assert repr(both) == "policies.save_any_of(policies.save_matmuls, policies.save_names('attn_out', 'qkv'))"
    assert repr(off) == f"policies.offload({both!r})"
    assert named == policies.save_names("attn_out", "qkv")
    assert hash(named) == hash(policies.save_names("qkv", "attn_out"))
    assert off == policies.offload(both) and named != policies.save_names("qkv")
    with pytest.raises(dataclasses.FrozenInstanceError):
        named.names = frozenset({"other"})
    assert off.names == both.names == named.names == frozenset({"qkv", "attn_out"})
    assert policies.offload(policies.save_matmuls).names == frozenset()


def test_policy_values_answer_as_the_closures_did():
    info = policies.PolicyInfo("linear", "qkv", 0, paddle.ones([2]), ((2,),))
    other = policies.PolicyInfo("softmax", None, 0, paddle.ones([2]), ((2,),))
    named = policies.save_names("qkv")
    assert named(info) is True and named(other) is False
    first = policies.save_any_of(lambda i: False, policies.offload(named), policies.save_all)
    assert first(info) is policies.OFFLOAD and first(other) is True
    assert policies.save_any_of(policies.save_matmuls)(other) is False
    assert policies.offload(policies.save_matmuls)(info) is policies.OFFLOAD


def test_names_inside_offload_and_any_of_still_raise_when_never_tagged():
    lin = nn.Linear(4, 4)
    x = requires_grad(paddle.randn([2, 4]))
    policy = policies.offload(policies.save_any_of(policies.save_matmuls, policies.save_names("qkv")))
    with pytest.raises(RecomputeError, match=r"named \['qkv'\], but none was tagged"):
        recompute(lin, x, use_reentrant=False, policy=policy)


def test_a_kernel_patched_into_c_ops_is_used_inside_policy_regions_and_kept_after():
    """A function put in ``paddle._C_ops`` in place of Paddle's kernel (a CPU stand-in for a
    GPU-only one) runs inside a policy region, forward and rerun, and is still there after."""
    from paddle import _C_ops

    original = _C_ops.tanh
    calls = []

    def stand_in(x):
        calls.append(1)
        return original(x)

    _C_ops.tanh = stand_in
    try:
        x = paddle.randn([3, 4])
        x.stop_gradient = False
        y = recompute(lambda t: paddle.tanh(t * 2.0), x, use_reentrant=False, policy=policies.recompute_all)
        assert _C_ops.tanh is stand_in  # not replaced by Paddle's kernel when the region ended
        y.sum().backward()
        assert len(calls) == 2  # the forward and the rerun
        assert _C_ops.tanh is stand_in
        x2 = x.detach()
        x2.stop_gradient = False
        paddle.tanh(x2 * 2.0).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), x2.grad.numpy())
    finally:
        _C_ops.tanh = original
