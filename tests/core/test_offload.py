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

# --------------------------------------------------------------------------- NOTE [ Strided copies ]


def _paddle_reads_the_saved_layout(unpack):
    """The grads of ``q`` and ``k`` in ``(q @ kᵀ) * c`` with ``unpack`` as the unpack hook."""
    paddle.seed(0)
    q, k, c = paddle.randn([2, 4, 8, 8]), paddle.randn([2, 4, 8, 8]), paddle.randn([2, 4, 8, 8])
    q.stop_gradient = k.stop_gradient = False
    with paddle.autograd.saved_tensors_hooks(lambda t: t, unpack):
        y = (paddle.matmul(q, k.transpose([0, 1, 3, 2])) * c).sum()
    return [g.numpy() for g in paddle.grad(y, [q, k])]


def test_a_contiguous_copy_of_a_saved_view_breaks_paddles_gradient():
    """The Paddle 3.3 behaviour the layout-keeping copies work around (if this starts
    passing, Paddle fixed it and the workaround can go)."""
    plain = _paddle_reads_the_saved_layout(lambda t: t)
    copied = _paddle_reads_the_saved_layout(lambda t: t.clone())
    assert not np.array_equal(copied[0], plain[0])


@pytest.mark.parametrize("view", ["transposed", "sliced", "row"])
def test_host_copies_keep_the_layout(view):
    base = paddle.arange(48, dtype="float32").reshape([4, 3, 4])
    t = {"transposed": base.transpose([0, 2, 1]), "sliced": base[:, 1:, ::2], "row": base[2]}[view]
    host, place = _offload.to_host(t)
    back = _offload.to_place(host, place)
    assert back.get_strides() == t.get_strides() and back._offset() == t._offset()
    assert back.data_ptr() != t.data_ptr()
    np.testing.assert_array_equal(back.numpy(), t.numpy())
    copied = _paddle_reads_the_saved_layout(lambda s: _offload.to_place(*_offload.to_host(s)))
    for got, want in zip(copied, _paddle_reads_the_saved_layout(lambda s: s), strict=True):
        np.testing.assert_array_equal(got, want)


def test_save_on_cpu_attention_gradients_exact():
    plain = _paddle_reads_the_saved_layout(lambda t: t)
    paddle.seed(0)
    q, k, c = paddle.randn([2, 4, 8, 8]), paddle.randn([2, 4, 8, 8]), paddle.randn([2, 4, 8, 8])
    q.stop_gradient = k.stop_gradient = False
    with paddle_recompute.save_on_cpu():
        y = (paddle.matmul(q, k.transpose([0, 1, 3, 2])) * c).sum()
    for got, want in zip(paddle.grad(y, [q, k]), plain, strict=True):
        np.testing.assert_array_equal(got.numpy(), want)
