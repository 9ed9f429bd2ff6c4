"""Program 2: the Dense network of MindSpore's "Cell.recompute vs torch checkpoint" page.

Against data/b_dense_pynative.json (MindSpore 2.10, fixed weights from b_dense_data.npz).

Tolerance: 1e-6 per element, not bit-exactness. MindSpore's CPU MatMul and ReduceSum kernels
accumulate in another order than Paddle's (MKL) kernels, so results differ in the last bits
(largest differences measured over the 8 cases: 7.2e-7 on the loss 3.05779, 2.4e-7 on the
logits, 3.6e-7 on the fc1.weight gradient, whose small entries differ by up to 25 ulp).
Sums over n elements of the reference statistics are compared within n * 1e-6 for the same
reason. Between our own
variants (every recompute option versus none) the results are compared bit for bit.
"""

from __future__ import annotations

import numpy as np
import paddle
import pytest
from _ms_helpers import DATA, reference, run_compat

import paddle_mindspore as ms
from paddle_mindspore import nn, ops

TOL = 1e-6  # per element; see the module docstring
NAMES = ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"]
CASES = sorted(reference("b_dense_pynative.json")["cases"])


@pytest.fixture(scope="module")
def program() -> dict:
    """The ported program's globals (its own run, with random weights, happens once)."""
    return run_compat("b_dense_cell_recompute.py")


def _build(program: dict, kwargs: dict, monkeypatch) -> nn.Cell:
    """The program's Net, with the recompute calls of one reference case, and the fixed weights."""
    cell_recompute, prim_recompute = nn.Cell.recompute, ops.Primitive.recompute
    rc_kwargs = kwargs.get("rc_kwargs", {})
    with monkeypatch.context() as patch:
        patch.setattr(nn.Cell, "recompute", (lambda self: cell_recompute(self, **rc_kwargs))
                      if kwargs["cell_rc"] else (lambda self: None))
        patch.setattr(ops.Primitive, "recompute",
                      prim_recompute if kwargs["prim_rc"] else (lambda self: self))
        model = program["Net"]()
    weights = np.load(DATA / "b_dense_data.npz")
    for name in NAMES:
        layer, attr = name.split(".")
        getattr(getattr(model, layer), attr).set_value(weights[name])
    return model


def _run(model: nn.Cell) -> tuple:
    """The page's forward_fn and value_and_grad, for fc1.weight and for every parameter."""
    def forward_fn(data, label):
        logits = model(data)
        loss = logits.sum()
        return loss, logits

    weights = np.load(DATA / "b_dense_data.npz")
    x, label = ms.Tensor(weights["x"]), ms.Tensor(weights["label"])
    grad_fn = ms.value_and_grad(forward_fn, None, (model.fc1.weight,), has_aux=True)
    (loss, logits), (g_fc1,) = grad_fn(x, label)
    params = [getattr(getattr(model, n.split(".")[0]), n.split(".")[1]) for n in NAMES]
    _, all_grads = ms.value_and_grad(forward_fn, None, params, has_aux=True)(x, label)
    return loss.numpy(), logits.numpy(), g_fc1.numpy(), [g.numpy() for g in all_grads]


def _assert_stats(grad: np.ndarray, stats: dict) -> None:
    n = grad.size
    values = grad.astype(np.float64).ravel()
    assert list(grad.shape) == stats["shape"]
    np.testing.assert_allclose(values[:8], stats["first8"], rtol=0, atol=TOL)
    np.testing.assert_allclose(values[-4:], stats["last4"], rtol=0, atol=TOL)
    np.testing.assert_allclose([values.min(), values.max()], [stats["min"], stats["max"]], rtol=0, atol=TOL)
    np.testing.assert_allclose([values.sum(), np.abs(values).sum()], [stats["sum"], stats["abs_sum"]],
                               rtol=0, atol=n * TOL)


@pytest.mark.parametrize("case", CASES)
def test_case_matches_mindspore(case, program, monkeypatch):
    expected = reference("b_dense_pynative.json")["cases"][case]
    loss, logits, g_fc1, all_grads = _run(_build(program, expected["kwargs"], monkeypatch))
    assert abs(float(loss) - expected["loss"]) <= TOL
    np.testing.assert_allclose(logits, expected["logits"], rtol=0, atol=TOL)
    np.testing.assert_allclose(g_fc1, expected["grad_fc1_weight"], rtol=0, atol=TOL)
    _assert_stats(g_fc1, expected["grad_fc1_weight_stats"])
    for name, grad in zip(NAMES, all_grads, strict=True):
        _assert_stats(grad, expected["all_param_grad_stats"][name])


@pytest.mark.parametrize("case", CASES)
def test_case_is_bitwise_equal_to_no_recompute(case, program, monkeypatch):
    baseline = _run(_build(program, {"cell_rc": False, "prim_rc": False}, monkeypatch))
    kwargs = reference("b_dense_pynative.json")["cases"][case]["kwargs"]
    result = _run(_build(program, kwargs, monkeypatch))
    for ours, base in zip(result[:3], baseline[:3], strict=True):
        np.testing.assert_array_equal(ours, base)
    for ours, base in zip(result[3], baseline[3], strict=True):
        np.testing.assert_array_equal(ours, base)
    assert reference("b_dense_pynative.json")["bitwise_equal_to_no_recompute"][case] is True


def test_headline_values(program, monkeypatch):
    """The README's headline numbers: loss 3.0577900409698486, fc1.weight grad sum 4.1805587."""
    loss, logits, g_fc1, _ = _run(_build(program, {"cell_rc": True, "prim_rc": True}, monkeypatch))
    assert abs(float(loss) - 3.0577900409698486) <= TOL
    np.testing.assert_allclose(logits, [[0.118293591, 1.141467690], [1.825477242, -0.027448535]],
                               rtol=0, atol=TOL)
    assert abs(float(g_fc1.astype(np.float64).sum()) - 4.1805587) <= g_fc1.size * TOL


def test_the_program_recomputes_what_it_says(program):
    model = program["Net"]()
    assert model.fc2._ms_recompute is not None and model.fc2._ms_recompute.use_reentrant
    assert model.relu2._recompute is True and model.relu1._recompute is False


def test_pytorch_half_written_with_paddle_recompute():
    """The page's PyTorch half on Paddle (paddle_recompute.recompute) gives MindSpore's numbers."""
    namespace = run_compat("b_dense_checkpoint_paddle.py")
    model = namespace["Net"]()
    weights = np.load(DATA / "b_dense_data.npz")
    for name in NAMES:  # paddle.nn.Linear stores (in, out): the transpose of MindSpore's layout
        layer, attr = name.split(".")
        value = weights[name].T if attr == "weight" else weights[name]
        getattr(getattr(model, layer), attr).set_value(value)
    output = model(paddle.to_tensor(weights["x"]))
    output.sum().backward()
    expected = reference("b_dense_pynative.json")["cases"]["no_recompute"]
    assert abs(float(output.sum()) - expected["loss"]) <= TOL
    np.testing.assert_allclose(model.fc1.weight.grad.numpy().T, expected["grad_fc1_weight"], rtol=0, atol=TOL)
