"""MindSpore's Tensor surface on Paddle tensors: who sees it, and that nothing else changes.

NOTE [ Caller-scoped Tensor semantics ] (compat/paddle_mindspore/_surface/scope.py): members whose
meanings differ dispatch on the calling module. These tests prove the three constraints of
the design: plain Paddle code behaves exactly as before, gradients and recompute regions see
the very tensors MindSpore code handles, and no shared member silently keeps Paddle's meaning
in MindSpore code (it is implemented, checked the same, or raises).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import paddle
import pytest
from _ms_cases import RECORDED
from _ms_helpers import PYTHONPATH, ROOT

import paddle_mindspore as ms  # this module is MindSpore code
from paddle_mindspore import MissingAPIError, nn
from paddle_mindspore._paddle_members import own_member
from paddle_mindspore._surface import install
from paddle_mindspore._surface.names import GUARDED, MINDSPORE_ONLY, SAME

PLAIN_PROBE = textwrap.dedent("""
    import paddle

    def probe():
        x = paddle.to_tensor([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]], stop_gradient=False)
        y = x.reshape([3, 2]).transpose([1, 0]).flatten(1)
        loss = y.std() + x.var() + x.max(1).sum() + x.mean(1, True).sum() + x.sum()
        (grad,) = paddle.grad(loss, x)
        layer = paddle.nn.Linear(2, 2)
        return [type(x.shape).__name__, repr(x.shape), repr(x), str(x.std()), repr(x.max(1)), x.size,
                type(x.size).__name__, x.view([3, 2]).shape, x.squeeze().shape, hasattr(x, "asnumpy"),
                repr(paddle.Tensor.reshape(x, [6])), grad.numpy().tolist(), layer.weight.name[:6],
                repr(x.split(3, axis=1)[0]), x.cholesky.__name__ if hasattr(x, "cholesky") else None]
""")


def _run(code: str) -> list:
    env = {"PYTHONPATH": PYTHONPATH, "PATH": "/usr/bin:/bin", "PYTHONWARNINGS": "ignore"}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                            timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_plain_paddle_code_behaves_exactly_as_before(tmp_path):
    """A plain Paddle module gives the same results before and after the layer is imported."""
    (tmp_path / "plain_probe.py").write_text(PLAIN_PROBE)
    before, after = _run(
        f"import sys, json; sys.path.insert(0, {str(tmp_path)!r}); import plain_probe\n"
        "first = plain_probe.probe(); import paddle_mindspore as ms\n"
        "assert ms.tensor_methods_installed(); print(json.dumps([first, plain_probe.probe()], default=str))")
    assert before == after
    assert before[0] == "Size" and before[9] is False  # Paddle's members, no asnumpy before the import


def test_paddles_own_modules_keep_paddles_members():
    """Code in a ``paddle.*`` module (this one is made up) gets Paddle's members even on tensors
    MindSpore code made, so Paddle's internals (list-typed shapes, unbiased std) keep working."""
    namespace = {"__name__": "paddle.nn.made_up", "paddle": paddle, "ms": ms}  # even holding the layer
    exec("def internal(x):\n    shape = x.shape\n    shape[0] = 1\n"
         "    return type(x.shape).__name__, shape + [7], x.std(), x.reshape([3, 2]).shape\n", namespace)
    x = ms.Tensor(np.array([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]], np.float32))
    kind, extended, std, reshaped = namespace["internal"](x)
    assert (kind, extended, reshaped) == ("Size", [1, 3, 7], [3, 2])
    np.testing.assert_allclose(std.asnumpy(), np.std(x.asnumpy(), ddof=1), rtol=1e-6)  # Paddle's: unbiased


def test_mindspore_code_sees_mindspore_members_on_any_paddle_tensor():
    x = paddle.to_tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))  # made by Paddle
    assert x.shape == (2, 3, 4) and isinstance(x.shape, tuple) and x.size == 24
    assert x.reshape(4, 6).shape == (4, 6) and x.transpose(1, 0, 2).shape == (3, 2, 4)
    np.testing.assert_allclose(x.std().asnumpy(), np.arange(24).std(), rtol=1e-6)  # ddof=0
    values, indices = x.max(1)
    assert values.shape == (2, 4) and indices.asnumpy().tolist() == [[2] * 4] * 2
    assert str(x[0, 0, :2]) == "[0. 1.]"


def test_gradients_flow_through_mindspore_members_identically():
    """MindSpore members are plain Paddle operations on the same tensors: same gradients, bit for bit."""
    data = np.random.RandomState(0).standard_normal((2, 3, 4)).astype(np.float32)
    x = paddle.to_tensor(data, stop_gradient=False)
    ours = (x.view(6, 4).transpose(1, 0).mean(0, True) * x.reshape(24)[:6]).sum() + x.std(axis=2).sum() \
        + x.max(axis=1).sum() + x.swapaxes(0, 2).squeeze().var(ddof=1)
    y = paddle.to_tensor(data, stop_gradient=False)
    base = (paddle.mean(paddle.transpose(paddle.reshape(y, [6, 4]), [1, 0]), 0, keepdim=True)
            * paddle.reshape(y, [24])[:6]).sum() + paddle.sqrt(paddle.var(y, axis=2, correction=0)).sum() \
        + paddle.max(y, axis=1).sum() \
        + paddle.var(paddle.squeeze(paddle.transpose(y, [2, 1, 0])), correction=1)
    np.testing.assert_array_equal(ours.numpy(), base.numpy())
    np.testing.assert_array_equal(paddle.grad(ours, x)[0].numpy(), paddle.grad(base, y)[0].numpy())


class _Attention(nn.Cell):
    calls = 0

    def construct(self, x):
        _Attention.calls += 1
        b, t, c = x.shape  # a tuple, inside the region and in its rerun
        q = x.view(b, t, 2, c // 2).transpose(0, 2, 1, 3)
        att = ms.ops.softmax(ms.ops.matmul(q, q.swapaxes(-2, -1)) / q.std(), axis=-1)
        return ms.ops.matmul(att, q).transpose(0, 2, 1, 3).reshape(b, t, c)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_recompute_regions_see_the_same_tensors(use_reentrant):
    data = np.random.RandomState(1).standard_normal((2, 5, 4)).astype(np.float32)
    grads = []
    for recompute in (False, True):
        cell = _Attention()
        if recompute:
            cell.recompute(use_reentrant=use_reentrant)
        _Attention.calls = 0
        grads.append(ms.grad(lambda x, c=cell: c(x).sum())(ms.Tensor(data)).asnumpy())
        assert _Attention.calls == (2 if recompute else 1)
    np.testing.assert_array_equal(grads[0], grads[1])


def test_shared_members_not_checked_raise_in_mindspore_code_only():
    x = ms.Tensor(np.eye(2, dtype=np.float32))
    with pytest.raises(MissingAPIError, match=r"mindspore\.Tensor\.cholesky is not provided"):
        x.cholesky()
    with pytest.raises(MissingAPIError, match=r"mindspore\.Tensor\.sort is not provided"):
        x.sort()  # MindSpore's gives (values, indices), Paddle's the values
    assert paddle.Tensor.cholesky.__wrapped__(x).shape == [2, 2]  # Paddle's member, unchanged
    assert "cholesky" in GUARDED
    with pytest.raises(MissingAPIError, match=r"mindspore\.Tensor\.nelement is not provided"):
        x.nelement()  # a MindSpore member Paddle lacks
    assert not hasattr(x, "nelement") and not hasattr(x, "no_such_member")
    with pytest.raises(AttributeError, match="'Tensor' object has no attribute 'no_such_member'") as error:
        x.no_such_member  # noqa: B018
    assert type(error.value) is AttributeError


def test_every_shared_member_is_classified():
    """Each name both MindSpore 2.10's and Paddle's Tensor define is implemented, the same, or guarded."""
    recorded = json.loads((RECORDED / "g_tensor_api.json").read_text())
    paddle_names = {n for n in dir(paddle.Tensor) if own_member(paddle.Tensor, n) is not install.ABSENT
                    or n in dir(object)} - set(install.ADDED)
    shared = (set(recorded["Tensor"]) & paddle_names) | ({"name"} & paddle_names)
    handled = set(install.DISPATCHED) | set(install.DISPATCHED_PROPERTIES) | SAME | GUARDED | {"name"}
    assert sorted(shared - handled) == []
    assert not SAME & GUARDED and not set(install.DISPATCHED) & (SAME | GUARDED)
    assert not (SAME | GUARDED) - paddle_names  # only names Paddle has
    assert MINDSPORE_ONLY == {n for n in recorded["Tensor"] if not n.startswith("_")} - paddle_names \
        - set(install.ADDED)


def test_uninstall_restores_paddles_members_exactly():
    installed = list(install._INSTALLED)
    assert installed and ms.tensor_methods_installed()
    try:
        ms.uninstall_tensor_methods()
        assert not hasattr(paddle.Tensor, "asnumpy") and not ms.tensor_methods_installed()
        for cls, name in installed:
            original = own_member(cls, name)
            if original is install.ABSENT:
                assert name not in cls.__dict__
            else:
                assert cls.__dict__[name] is original
        assert type(ms.Tensor([1.0]).shape).__name__ == "Size"  # Paddle's, even here
    finally:
        ms.install_tensor_methods()
    assert [(c, n) for c, n in install._INSTALLED] == installed and ms.Tensor([1.0]).shape == (1,)


def test_parameter_surface():
    p = ms.Parameter(ms.Tensor(np.ones((2, 3), np.float32)), name="w")
    assert (p.name, p.requires_grad) == ("w", True)
    p.requires_grad = False
    assert p.stop_gradient and not p.requires_grad
    assert p.set_data(ms.Tensor(np.zeros((4, 5), np.float64))) is p and p.shape == (4, 5)
    assert p.dtype == ms.float32 and p.init_data() is p and p.asnumpy().sum() == 0
    c = p.clone()
    assert c is not p and isinstance(c, ms.Parameter) and (c.name, c.requires_grad) == ("w", False)
    p.name = "renamed"
    assert p.name == "renamed"
    assert repr(p) == "Parameter (name=renamed, shape=(4, 5), dtype=Float32, requires_grad=False)"


def test_parameter_clone_with_an_initializer():
    """``Parameter.clone(init=...)``: a new parameter of the same name, shape, dtype and
    ``requires_grad``, holding ``init`` (an initializer name or a number)."""
    p = ms.Parameter(ms.Tensor(np.full((2, 3), 7.0, np.float32)), name="w", requires_grad=False)
    for init, value in (("zeros", 0.0), ("ones", 1.0), (2.5, 2.5)):
        c = p.clone(init=init)
        assert c is not p and isinstance(c, ms.Parameter) and (c.name, c.requires_grad) == ("w", False)
        assert c.shape == (2, 3) and c.dtype == ms.float32
        np.testing.assert_array_equal(c.asnumpy(), np.full((2, 3), value, np.float32))
    np.testing.assert_array_equal(p.asnumpy(), np.full((2, 3), 7.0, np.float32))


def test_set_data_keeps_optimizer_and_cell_references():
    dense = nn.Dense(3, 2)
    opt = nn.SGD(dense.trainable_params(), learning_rate=1.0)
    weight = dense.weight
    weight.set_data(ms.Tensor(np.full((2, 3), 0.5, np.float32)))
    assert dense.weight is weight and opt.parameters[0] is weight
    opt((ms.ops.ones((2, 3)), ms.ops.zeros(2)))
    np.testing.assert_array_equal(dense.weight.asnumpy(), np.full((2, 3), -0.5, np.float32))


def test_shape_is_a_tuple_equal_to_lists():
    shape = ms.ops.ones((2, 3)).shape
    assert shape == (2, 3) and shape == [2, 3] and shape != [3, 2] and hash(shape) == hash((2, 3))
    assert shape + (4,) == (2, 3, 4) and repr(shape) == "(2, 3)" and {shape: 1}[(2, 3)] == 1


def test_under_the_runner_the_scripts_own_helper_modules_are_mindspore_code(tmp_path, monkeypatch, capsys):
    """A helper module next to the script that imports nothing of MindSpore still gets
    MindSpore's members under the runner (and Paddle's outside it)."""
    (tmp_path / "shape_helper.py").write_text(
        "def describe(x):\n    return type(x.shape).__name__, x.std().item()\n")
    (tmp_path / "script.py").write_text(
        "import mindspore as ms\nimport numpy as np\nimport shape_helper\n"
        "print(*shape_helper.describe(ms.Tensor(np.array([1.0, 3.0], np.float32))))\n")
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.setattr(sys, "path", list(sys.path))
    from paddle_mindspore import _runner

    assert _runner.main([str(tmp_path / "script.py")]) == 0
    assert capsys.readouterr().out.split() == ["Shape", "1.0"]  # a tuple; std with ddof=0
    sys.modules.pop("shape_helper")
    sys.path.insert(0, str(tmp_path))
    import shape_helper

    kind, std = shape_helper.describe(ms.Tensor(np.array([1.0, 3.0], np.float32)))
    assert (kind, round(std, 4)) == ("Size", 1.4142)  # outside the runner: Paddle's members
    sys.modules.pop("shape_helper")
