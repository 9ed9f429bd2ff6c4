"""The MindSpore names mindformers' Qwen3 training-graph path needs beyond Llama's and GLM2's.

Those MindSpore 2.10's CPU build computes are checked case by case against it
(``compat/record/ms_cases_qwen3.py``, recorded/m_qwen3_cases.json): ``AddExt``, ``SubExt``,
``Muls``, ``SumExt``, ``Cos``, ``Sin``, ``Split``, ``ArgMaxWithValue``, ``Minimum``,
``InplaceCopy`` (values and input gradients) and ``Generator._step``. Those it has no CPU kernel
for (``RmsNorm``, ``Outer``, ``FlashAttentionScore``, ``StackExt``, ``OneHotExt``,
``ZerosLikeExt``, ``mint.nn.functional.embedding``) are checked against the formulas MindSpore
documents, computed in float64 with numpy; ``Morph``, ``DropoutExt`` and the runtime settings
against MindSpore's documented behaviour.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import paddle
import pytest
from _ms_cases import compare, recorded, run_case
from _ms_helpers import checkout_env

import paddle_mindspore as ms
from paddle_mindspore.ops import auto_generate as g
from paddle_mindspore.ops import operations as P

CASES = recorded("m_qwen3_cases.json")["cases"]
RNG = np.random.default_rng(0)
# float32 against a float64 reference: a few float32 ulps of values of size ~1
F32 = 1e-5


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_matches_mindspore(name, alias):
    compare(CASES[name]["result"], run_case(CASES[name]["source"]), name)


def _tensor(shape, grad=True):
    t = paddle.to_tensor(RNG.standard_normal(shape).astype(np.float32))
    t.stop_gradient = not grad
    return t


def _grads(out, *xs, seed=1):
    dout = np.random.default_rng(seed).standard_normal(out.shape).astype(np.float32)
    return [g.numpy() for g in paddle.grad((out * paddle.to_tensor(dout)).sum(), list(xs))], dout


def test_rms_norm_is_the_documented_formula_with_its_gradient():
    x, gamma = _tensor([2, 3, 8]), _tensor([8])
    y, rstd = P.RmsNorm(1e-5)(x, gamma)
    x64, g64 = x.numpy().astype(np.float64), gamma.numpy().astype(np.float64)
    r64 = 1 / np.sqrt((x64 * x64).mean(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y.numpy(), x64 * r64 * g64, rtol=F32, atol=F32)
    np.testing.assert_allclose(rstd.numpy(), r64, rtol=F32)
    assert rstd.shape == [2, 3, 1] and rstd.dtype == paddle.float32
    (dx, dg), dout = _grads(y, x, gamma)
    n = 8
    xhat = x64 * r64
    dxhat = dout * g64
    expected_dx = r64 * (dxhat - xhat * (dxhat * xhat).sum(-1, keepdims=True) / n)
    np.testing.assert_allclose(dx, expected_dx, rtol=1e-4, atol=F32)
    np.testing.assert_allclose(dg, (dout * xhat).sum((0, 1)), rtol=1e-4, atol=F32)


def _attention64(q, k, v, mask, scale):
    n1, n2 = q.shape[1], k.shape[1]
    k, v = np.repeat(k, n1 // n2, axis=1), np.repeat(v, n1 // n2, axis=1)
    s = q @ np.swapaxes(k, -1, -2) * scale
    s = np.where(mask.astype(bool), -np.inf, s)
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    return w @ v, s


@pytest.mark.parametrize("layout", ["BNSD", "BSH", "SBH"])
@pytest.mark.parametrize("kv_heads", [4, 2])
def test_flash_attention_score_is_masked_softmax_attention(layout, kv_heads):
    """Query head ``i`` attends with key/value head ``i // (N1 // N2)``; 1s in the mask are
    excluded; outputs ``(softmax_max, softmax_sum, softmax_out, attention_out)``; the
    gradients are those of the same arithmetic."""
    b, n, s, d = 2, 4, 5, 3
    q, k, v = _tensor([b, n, s, d]), _tensor([b, kv_heads, s, d]), _tensor([b, kv_heads, s, d])
    mask = np.triu(np.ones((s, s), np.uint8), 1)[None, None]
    expected, scores = _attention64(*(t.numpy().astype(np.float64) for t in (q, k, v)), mask, 0.5)

    def to(t):
        if layout == "BNSD":
            return t
        bsh = t.transpose([0, 2, 1, 3]).reshape([b, s, -1])
        return bsh if layout == "BSH" else bsh.transpose([1, 0, 2])

    fa = P.nn_ops.FlashAttentionScore(head_num=n, scale_value=0.5, next_tokens=0, input_layout=layout)
    smax, ssum, sout, out = fa(to(q), to(k), to(v), None, None, None, paddle.to_tensor(mask), None)
    np.testing.assert_allclose(out.numpy(), to(paddle.to_tensor(expected)).numpy(), rtol=1e-5, atol=F32)
    assert smax.shape == ssum.shape == [b, n, s, 8] and sout.shape == [0]
    row_max = scores.max(-1, keepdims=True)
    np.testing.assert_allclose(smax.numpy()[..., 0:1], row_max, rtol=F32)
    row_sum = np.exp(scores - row_max).sum(-1, keepdims=True)
    np.testing.assert_allclose(ssum.numpy()[..., 0:1], row_sum, rtol=F32)
    grads, dout = _grads(out, q, k, v)
    plain = [paddle.to_tensor(t.numpy().astype(np.float64), stop_gradient=False) for t in (q, k, v)]
    kk, vv = (paddle.repeat_interleave(t, n // kv_heads, axis=1) for t in plain[1:])
    sc = paddle.matmul(plain[0], kk, transpose_y=True) * 0.5 + paddle.to_tensor(mask * -1e30)
    ref = paddle.matmul(paddle.nn.functional.softmax(sc, -1), vv)
    ref_grads = paddle.grad((to(ref) * paddle.to_tensor(dout.astype(np.float64))).sum(), plain)
    for got, want in zip(grads, ref_grads, strict=True):
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-4, atol=1e-5)


def test_flash_attention_score_refuses_what_it_does_not_compute():
    q = _tensor([1, 2, 3, 4])
    with pytest.raises(NotImplementedError, match="keep_prob"):
        P.nn_ops.FlashAttentionScore(2, keep_prob=0.9, input_layout="BNSD")(q, q, q)
    with pytest.raises(NotImplementedError, match="real_shift"):
        P.nn_ops.FlashAttentionScore(2, input_layout="BNSD")(q, q, q, q)


def test_outer_stack_one_hot_zeros_like_and_embedding():
    x, y = _tensor([3]), _tensor([4])
    out = g.Outer()(x, y)
    np.testing.assert_array_equal(out.numpy(), x.numpy()[:, None] * y.numpy()[None, :])
    (dx, dy), dout = _grads(out, x, y)
    np.testing.assert_allclose(dx, dout @ y.numpy(), rtol=F32)
    np.testing.assert_allclose(dy, x.numpy() @ dout, rtol=F32)
    a, c = _tensor([2, 3]), _tensor([2, 3])
    np.testing.assert_array_equal(g.StackExt(dim=-1)((a, c)).numpy(), np.stack([a.numpy(), c.numpy()], -1))
    idx = paddle.to_tensor(np.array([[0, 3], [2, 1]], np.int64))
    hot = g.OneHotExt(axis=0)(idx, 4, ms.Tensor(2.0), ms.Tensor(-1.0))
    expected = np.where(np.arange(4)[:, None, None] == idx.numpy()[None], 2.0, -1.0)
    np.testing.assert_array_equal(hot.numpy(), expected)
    zeros = g.ZerosLikeExt()(a, ms.int32)
    assert zeros.dtype == paddle.int32 and zeros.shape == [2, 3] and not zeros.numpy().any()
    w = _tensor([5, 3])
    rows = ms.mint.nn.functional.embedding(paddle.to_tensor(np.array([[4, 0], [4, 2]], np.int32)), w)
    np.testing.assert_array_equal(rows.numpy(), w.numpy()[[[4, 0], [4, 2]]])
    (dw,), dout = _grads(rows, w)
    expected_dw = np.zeros((5, 3), np.float32)
    np.add.at(expected_dw, [4, 0, 4, 2], dout.reshape(4, 3))
    np.testing.assert_allclose(dw, expected_dw, rtol=F32)


def test_morph_calls_its_function_in_graph_mode_only():
    """``Morph`` is its function (gradient included) in GRAPH_MODE and raises in PyNative mode,
    as MindSpore documents."""
    morph = P.Morph(lambda a, b: a * b + a, lambda *s: s[0], lambda *t: t[0])
    x, y = _tensor([3]), _tensor([3])
    before = ms.get_context("mode")
    try:
        ms.set_context(mode=ms.PYNATIVE_MODE)
        with pytest.raises(RuntimeError, match="^Morph is only supported in GRAPH_MODE.$"):
            morph(x, y)
        ms.set_context(mode=ms.GRAPH_MODE)
        out = morph(x, y)
    finally:
        ms.set_context(mode=before)
    np.testing.assert_array_equal(out.numpy(), x.numpy() * y.numpy() + x.numpy())
    (dx, dy), dout = _grads(out, x, y)
    np.testing.assert_allclose(dx, dout * (y.numpy() + 1), rtol=F32)
    np.testing.assert_allclose(dy, dout * x.numpy(), rtol=F32)


def test_dropout_ext_computes_only_p_zero():
    x = _tensor([3, 5])
    out, mask = g.DropoutExt()(x, 0.0, ms.Tensor(0), ms.Tensor(0))
    assert out is x and mask.shape == [2] and (mask.numpy() == 255).all()
    with pytest.raises(NotImplementedError, match="DropoutExt with p=0.5"):
        g.DropoutExt()(x, 0.5, ms.Tensor(0), ms.Tensor(0))


RUNTIME = """
import os
from paddle_mindspore import runtime
runtime.set_memory(max_size="8GB")
try:
    runtime.set_memory(max_size="8GB")
except RuntimeError as e:
    print("again:", e)
cpus = sorted(os.sched_getaffinity(0))
runtime.set_cpu_affinity(True, [f"{cpus[0]}-{cpus[0]}"])
print("bound:", sorted(os.sched_getaffinity(0)) == [cpus[0]])
try:
    runtime.set_cpu_affinity(True)
except RuntimeError as e:
    print("again:", e)
"""


def test_runtime_settings_apply_once_per_process():
    """``set_memory`` and ``set_cpu_affinity`` raise when called again, with MindSpore's texts;
    ``set_cpu_affinity`` with a list binds the main thread to those cores. (A subprocess: both
    are process-wide.)"""
    done = subprocess.run([sys.executable, "-c", RUNTIME], env=checkout_env(), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == [
        "again: The 'set_memory' can not be set repeatedly.",
        "bound: True",
        "again: The 'mindspore.runtime.set_cpu_affinity' cannot be set repeatedly.",
    ]


@pytest.mark.parametrize("size", ["8G", "0GB", 8])
def test_set_memory_checks_its_sizes(size):
    from paddle_mindspore.runtime import _settings

    with pytest.raises(ValueError, match="memory value"):
        _settings.set_memory(max_size=size)
    assert "memory" not in _settings._settings


def test_runtime_is_an_attribute_after_import_alone():
    """``import mindspore`` makes ``mindspore.runtime`` available, as MindSpore's does."""
    import paddle_mindspore

    assert paddle_mindspore.runtime.set_memory.__module__.endswith("runtime._settings")
