"""paddle_recompute.testing: the helpers pass on equal data and fail, informatively, otherwise."""

import doctest
import functools

import numpy as np
import paddle
import pytest
from paddle import nn

from paddle_recompute import recompute, testing
from paddle_recompute._interop import compare, parity
from paddle_recompute.testing import (
    assert_loss_parity,
    assert_tensors_equal,
    recompute_sublayers,
    snapshot_buffers,
    snapshot_grads,
    snapshot_params,
)

# --------------------------------------------------------------------------- assert_tensors_equal


def report(actual, expected, **kwargs) -> str:
    with pytest.raises(AssertionError) as info:
        assert_tensors_equal(actual, expected, **kwargs)
    return str(info.value)


def test_equal_data_passes_in_every_form():
    a = np.arange(12, dtype="float32").reshape(3, 4)
    assert_tensors_equal(paddle.to_tensor(a), a)
    assert_tensors_equal(a, paddle.to_tensor(a))
    assert_tensors_equal([paddle.to_tensor(a), None, (a, 3)], [a, None, (a.copy(), 3)])
    assert_tensors_equal({"w": a, "b": {"x": [a]}}, {"b": {"x": [a]}, "w": a})
    assert_tensors_equal(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))
    assert_tensors_equal(np.array([np.inf, -np.inf]), np.array([np.inf, -np.inf]))
    assert_tensors_equal(paddle.to_tensor([1, 2], dtype="int64"), np.array([1, 2], dtype="int64"))
    assert_tensors_equal(np.zeros([0, 3]), np.zeros([0, 3]))
    assert_tensors_equal(2.5, np.float64(2.5))
    assert_tensors_equal(paddle.to_tensor(0.5), 0.5)  # a Python number adopts the dtype
    assert_tensors_equal(3, np.int32(3))


def test_one_perturbed_element_is_reported_numpy_style():
    expected = np.linspace(1, 2, 20, dtype="float32").reshape(4, 5)
    actual = expected.copy()
    actual[2, 3] += 0.5
    text = report(paddle.to_tensor(actual), expected, names="layer.weight")
    assert "Mismatched elements: 1 / 20 (5%)" in text
    assert "Entry ['layer.weight']" in text
    assert "Shape: (4, 5), dtype: float32" in text
    assert "Max absolute difference: 0.5" in text
    rel = 0.5 / expected[2, 3]
    assert f"Max relative difference: {rel:.6g}" in text
    assert "Largest difference at index (2, 3)" in text


def test_largest_of_several_differences_is_located():
    expected = np.zeros(10, dtype="float64")
    actual = expected.copy()
    actual[[1, 7]] = [0.1, -3.0]
    text = report(actual, expected)
    assert "Mismatched elements: 2 / 10 (20%)" in text
    assert "Max absolute difference: 3" in text
    assert "Max relative difference: inf" in text
    assert "Largest difference at index (7,)" in text


def test_names_label_the_entries_of_a_sequence():
    a = np.ones(3, "float32")
    text = report([a, a + 1], [a, a], names=["fc.weight", "fc.bias"])
    assert "Entry ['fc.bias']" in text and "fc.weight" not in text
    assert "1 of 2 entries differ" in text
    with pytest.raises(ValueError, match="one name per entry"):
        assert_tensors_equal([a], [a], names=["x", "y"])


def test_nested_paths_name_the_entry():
    text = report({"grads": [{"w": np.ones(2)}]}, {"grads": [{"w": np.zeros(2)}]})
    assert "Entry ['grads'][0]['w']" in text


def test_structural_differences_are_reported():
    a = np.ones(3, "float32")
    assert "Shapes differ: actual (3,), expected (1, 3)" in report(a, a.reshape(1, 3))
    assert "Dtypes differ: actual float32, expected float64" in report(a, a.astype("float64"))
    assert "actual None, expected array of shape (3,)" in report(None, a)
    assert "Lengths differ: actual 1, expected 2" in report([a], [a, a])
    assert "Keys differ: missing ['b'], unexpected ['c']" in report({"a": a, "c": a}, {"a": a, "b": a})
    assert "Values differ: actual 'x', expected 'y'" in report("x", "y")
    assert "Structures differ" in report([a], {"a": a})


def test_tolerances_and_exactness():
    expected = np.array([1.0, 2.0], "float32")
    actual = expected + np.float32(1e-6)
    text = report(actual, expected)
    assert text.startswith("Not equal: 1 of 1 entries differ")
    assert_tensors_equal(actual, expected, rtol=1e-5)
    assert_tensors_equal(actual, expected, atol=1e-5)
    assert "rtol=1e-08, atol=1e-09" in report(actual, expected, rtol=1e-8, atol=1e-9)
    assert "Mismatched elements: 1 / 1" in report(np.array([3]), np.array([4]))


def test_err_msg_and_truncation():
    many = {f"p{i}": np.ones(2) for i in range(15)}
    zeros = {k: np.zeros(2) for k in many}
    text = report(many, zeros, err_msg="after step 3")
    assert "after step 3" in text
    assert "15 of 15 entries differ" in text
    assert "... and 5 more differing entries: ['p10']" in text


def test_traceback_is_hidden():
    assert "__tracebackhide__" in testing.assert_tensors_equal.__code__.co_varnames
    assert "__tracebackhide__" in testing.assert_loss_parity.__code__.co_varnames


# --------------------------------------------------------------------------- snapshots


def test_snapshots_copy_and_keep_missing_grads():
    model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1D(2), nn.Linear(2, 1))
    model[2].weight.stop_gradient = True
    grads = snapshot_grads(model)
    assert set(grads) == {name for name, _ in model.named_parameters()}
    assert all(g is None for g in grads.values())
    x = paddle.randn([4, 2])
    model(x).sum().backward()
    grads = snapshot_grads(model)
    assert grads["2.weight"] is None and grads["0.weight"] is not None
    params = snapshot_params(model)
    with paddle.no_grad():
        model[0].weight.set_value(model[0].weight * 0)
    assert np.any(params["0.weight"] != 0), "a snapshot must be a copy"
    assert isinstance(snapshot_buffers(model), dict)


# --------------------------------------------------------------------------- assert_loss_parity


class DropoutNet(nn.Layer):
    def __init__(self, options=None):
        super().__init__()
        self.options = options
        self.block = nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.5), nn.ReLU(), nn.Linear(6, 6))
        self.head = nn.Linear(6, 1)

    def forward(self, x):
        h = recompute(self.block, x, **self.options) if self.options is not None else self.block(x)
        return self.head(h)


def sgd(model):
    return paddle.optimizer.SGD(0.1, parameters=model.parameters())


def train_step(model, optimizer, step):
    loss = (model(paddle.randn([4, 6])) ** 2).mean()
    loss.backward()
    return loss


def test_parity_passes_with_recompute_in_the_model(use_reentrant):
    def build(recompute_on):
        model = DropoutNet({"use_reentrant": use_reentrant} if recompute_on else None)
        return model, sgd(model)

    assert_loss_parity(build, train_step, steps=3)


def test_parity_passes_with_a_recompute_plan(use_reentrant):
    def build(recompute_on):
        model = DropoutNet()
        return model, sgd(model)

    plan = functools.partial(recompute_sublayers, names=["block"], use_reentrant=use_reentrant)
    assert_loss_parity(build, train_step, steps=3, recompute_plan=plan)


def test_parity_fails_when_recompute_draws_new_dropout_masks(use_reentrant):
    """The check can fail: recomputing without replaying the RNG changes the gradients."""

    def build(recompute_on):
        model = DropoutNet()
        return model, sgd(model)

    plan = functools.partial(recompute_sublayers, names=["block"], use_reentrant=use_reentrant,
                             preserve_rng_state=False)
    with pytest.raises(AssertionError) as info:
        assert_loss_parity(build, train_step, steps=3, recompute_plan=plan)
    text = str(info.value)
    assert "Training with recompute (actual) differs from training without it" in text
    assert "Entry ['grads'][0]['block.0.weight']" in text
    assert "Mismatched elements" in text
    assert "['losses'][0]" not in text  # the forward itself was right


def test_parity_fails_on_a_different_model():
    def build(recompute_on):
        model = DropoutNet()
        return model, paddle.optimizer.SGD(0.2 if recompute_on else 0.1, parameters=model.parameters())

    with pytest.raises(AssertionError, match=r"Entry \['losses'\]\[1\]"):
        assert_loss_parity(build, train_step, steps=2)


def test_parity_compares_running_statistics():
    def build(recompute_on):
        model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1D(3), nn.Linear(3, 1))
        if recompute_on:
            model[1]._momentum = 0.5  # a wrong statistic, nothing else differs
        return model, sgd(model)

    def step(model, optimizer, i):
        loss = model(paddle.randn([5, 3])).mean()
        loss.backward()
        return loss

    with pytest.raises(AssertionError, match=r"1\._mean"):
        assert_loss_parity(build, step, steps=2)


def test_parity_rejects_bad_steps():
    with pytest.raises(ValueError, match="steps"):
        assert_loss_parity(lambda r: None, lambda m, o, s: None, steps=0)


# --------------------------------------------------------------------------- recompute_sublayers


def test_recompute_sublayers_reruns_only_the_named_layers(use_reentrant):
    model = nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 1))
    calls = {"0": 0, "2": 0}
    def counting_hook(name):
        def hook(layer, inputs):
            calls[name] += 1

        return hook

    for name in calls:
        model[int(name)].register_forward_pre_hook(counting_hook(name))
    recompute_sublayers(model, ["0"], use_reentrant=use_reentrant)
    x = paddle.randn([2, 3])
    x.stop_gradient = False
    model(x).sum().backward()
    assert calls == {"0": 1, "2": 1}  # hooks ran once, outside the region
    assert model[0].weight.grad is not None


def test_recompute_sublayers_counts_reruns(use_reentrant):
    model = nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 1))
    counted = []
    inner = model[0].forward
    model[0].forward = lambda *a, **k: (counted.append(1), inner(*a, **k))[1]
    recompute_sublayers(model, ["0"], use_reentrant=use_reentrant)
    x = paddle.randn([2, 3])
    x.stop_gradient = False
    model(x * 1).sum().backward()  # not a leaf: a leaf would stay itself, nothing to rerun
    assert len(counted) == 2


def test_recompute_sublayers_returns_an_undo(use_reentrant):
    import paddle_recompute as pr

    model = nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 1))
    counted = []
    inner = model[0].forward
    model[0].forward = lambda *a, **k: (counted.append(1), inner(*a, **k))[1]
    mine = model[0].forward
    x = paddle.randn([2, 3])
    x.stop_gradient = False
    # x * 1: a leaf input would come back as itself (NOTE [ Saved leaves ]), leaving nothing to rerun
    with recompute_sublayers(model, ["0", "2"], use_reentrant=use_reentrant) as handle:
        assert isinstance(handle, pr.planner.Applied) and handle.layers == [model[0], model[2]]
        model(x * 1).sum().backward()
        assert len(counted) == 2  # forward and the rerun
    assert model[0].forward is mine and "forward" not in vars(model[2])
    handle.remove()  # idempotent
    counted.clear()
    model(x * 1).sum().backward()
    assert len(counted) == 1  # no rerun once removed


def test_recompute_sublayers_unknown_name():
    with pytest.raises(KeyError, match="'nope' is not a sublayer"):
        recompute_sublayers(nn.Sequential(nn.Linear(2, 2)), ["nope"])


# --------------------------------------------------------------------------- docstrings


@pytest.mark.parametrize("module", [compare, parity], ids=["compare", "parity"])
def test_docstring_examples_run(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
