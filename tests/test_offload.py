"""offload_indices: chosen inputs are held as host copies until backward, in both modes."""

import numpy as np
import paddle
import pytest

import paddle_recompute
from paddle_recompute import recompute
from paddle_recompute._core import offload as _offload


def _block():
    return paddle.nn.Sequential(paddle.nn.Linear(6, 6), paddle.nn.Tanh(), paddle.nn.Linear(6, 6))


def _grads(block, x, pos, **options):
    x = x.clone()
    x.stop_gradient = False
    if options:
        y = recompute(lambda a, b: block(a) + b, x, pos, **options)
    else:
        y = block(x) + pos
    y.sum().backward()
    grads = [x.grad.numpy()] + [p.grad.numpy() for p in block.parameters()]
    block.clear_gradients(set_to_zero=False)
    return grads


@pytest.mark.parametrize("indices", [[0], [1], [0, 1]])
def test_offload_parity(use_reentrant, indices):
    block = _block()
    x = paddle.randn([3, 6])
    pos = paddle.randn([3, 6])
    ref = _grads(block, x, pos)
    out = _grads(block, x, pos, use_reentrant=use_reentrant, offload_indices=indices)
    for a, b in zip(ref, out, strict=True):
        np.testing.assert_array_equal(a, b)


def test_offloaded_input_is_a_host_copy(use_reentrant, monkeypatch):
    """The frame holds what to_host returned (a separate buffer), not the caller's tensor."""
    made = []
    original = _offload.to_host

    def spy(t):
        host, place = original(t)
        made.append((t, host))
        return host, place

    monkeypatch.setattr("paddle_recompute._core.reentrant.to_host", spy)
    monkeypatch.setattr("paddle_recompute._core.nonreentrant.to_host", spy)
    block = _block()
    x = paddle.randn([3, 6])
    x.stop_gradient = False
    recompute(block, x, use_reentrant=use_reentrant, offload_indices=[0]).sum().backward()
    assert len(made) == 1
    caller, host = made[0]
    assert host is not caller
    assert host.place.is_cpu_place()
    assert not host._is_shared_buffer_with(caller)


@pytest.mark.parametrize("bad", [[5], [1], ["0"]])
def test_offload_index_must_name_a_tensor(bad):
    block = _block()
    x = paddle.randn([3, 6])
    with pytest.raises(ValueError, match="offload_indices"):
        recompute(lambda a, flag: block(a), x, "not a tensor", offload_indices=bad)


def test_offload_indices_type_error():
    with pytest.raises(TypeError, match="offload_indices"):
        recompute(_block(), paddle.randn([3, 6]), offload_indices=0)


def test_public_api_lists_offload_in_signature():
    import inspect

    assert "offload_indices" in inspect.signature(paddle_recompute.recompute).parameters


def test_offloaded_non_leaf_input_keeps_its_path_under_paddle_grad(use_reentrant):
    """paddle.grad w.r.t. a leaf upstream of an offloaded non-leaf input: the host copy has no
    grad node, so the region must remember the input's (it once returned None here)."""
    block = _block()
    w = paddle.randn([6, 6])
    w.stop_gradient = False
    x = paddle.randn([3, 6])

    def grad_of_w(**options):
        h = x @ w  # a non-leaf input
        y = recompute(block, h, use_reentrant=use_reentrant, **options) if options else block(h)
        (g,) = paddle.grad(y.sum(), [w])
        return g.numpy()

    np.testing.assert_array_equal(grad_of_w(offload_indices=[0]), grad_of_w())
