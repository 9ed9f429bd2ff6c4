"""Saved tensors kept on the host until backward: ``save_on_cpu`` and ``policies.OFFLOAD``.

On CPU the "host copy" is a copy in the same memory: these tests prove exactness and that
the mechanism ran (counts of copies, which tensors were copied); the GPU test (pinned,
asynchronous copies) runs only on a CUDA build.
"""

import paddle
import pytest
from _op_counts import counting_ops
from _rc_helpers import assert_matches_plain, requires_grad, seed_all
from paddle import nn
from paddle.base import core

import paddle_recompute as pr
from paddle_recompute import policies, recompute
from paddle_recompute._core import offload as _offload
from paddle_recompute._selective import save_on_cpu as _save_on_cpu
from paddle_recompute.testing import assert_tensors_equal


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.a = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Dropout(0.3))
        self.b = nn.Sequential(nn.Linear(16, 8), nn.Tanh())

    def forward(self, x, *, inner=None):
        h = self.a(x)
        if inner is not None:
            h = recompute(self.b, h, use_reentrant=False, policy=inner)
        else:
            h = self.b(h)
        return h * h


@pytest.fixture
def copies(monkeypatch):
    """Counts the host copies made (wraps ``to_host`` where the offload code calls it)."""
    made = []

    def counting(t, blocking=True):
        made.append(tuple(t.shape))
        return _offload.to_host(t, blocking)

    monkeypatch.setattr(_save_on_cpu, "to_host", counting)
    from paddle_recompute._selective import frame as _selective

    monkeypatch.setattr(_selective, "to_host", counting)
    return made


def _grads(call):
    """Seeded Net, ``call(net, x)`` for the output, backward; the output and every gradient."""
    seed_all()
    net = Net()
    x = requires_grad(paddle.randn([4, 8]))
    out = call(net, x)
    out.sum().backward()
    return [out, x.grad, *(p.grad for p in net.parameters())]


def _on_cpu(net, x, inner=None):
    with pr.save_on_cpu():
        return net(x, inner=inner)


def test_save_on_cpu_parity_and_copies(copies):
    assert_tensors_equal(_grads(_on_cpu), _grads(lambda net, x: net(x)))
    # gelu (x), dropout (mask), linear (h), tanh (out), multiply (h and h); the input x
    # (a leaf that needs a gradient) and the parameters stay themselves (NOTE [ Saved leaves ]).
    assert len(copies) == 6
    assert (16, 8) not in copies and (8, 16) not in copies


@pytest.mark.parametrize("inner", [policies.recompute_all, policies.save_matmuls])
def test_save_on_cpu_around_a_region(copies, inner):
    """The region owns what it saves; the rest goes to the host."""
    expected = _grads(lambda net, x: net(x))
    assert_tensors_equal(_grads(lambda net, x: _on_cpu(net, x, inner=inner)), expected)
    assert len(copies) == 4  # gelu (x), dropout (mask), multiply (h and h); not the leaf x


def test_region_around_save_on_cpu(copies):
    expected = _grads(lambda net, x: net(x))
    got = _grads(lambda net, x: recompute(_on_cpu, net, x, use_reentrant=False))
    assert_tensors_equal(got, expected)
    # The region outside owns every saved tensor in forward; its recomputation reruns the
    # body, whose save_on_cpu frame is then the innermost: those copies are discarded.
    # The leaf x and the parameters are never copied (NOTE [ Saved leaves ]).
    assert len(copies) == 6


@pytest.mark.parametrize("early_stop", [True, False])
def test_offload_policy_parity_and_skipping(copies, early_stop):
    def make():
        net = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Dropout(0.3), nn.Linear(16, 8), nn.Tanh())
        x = requires_grad(paddle.randn([4, 8]))
        return net, (x,), {}, [x, *net.parameters()]

    with counting_ops("linear") as counts:
        assert_matches_plain(make, use_reentrant=False, early_stop=early_stop,
                             policy=policies.offload(policies.save_matmuls))
    assert counts["linear"] == 2  # the region's forward only (the plain run is not observed)
    assert copies == [(4, 16), (4, 8)]  # the two linear outputs, nothing else


def test_save_on_cpu_checks_its_argument():
    with pytest.raises(TypeError, match="non_blocking"):
        with pr.save_on_cpu(non_blocking="yes"):
            pass


@pytest.mark.skipif(not core.is_compiled_with_cuda(), reason="needs a CUDA build of Paddle")
def test_gpu_pinned_and_exact():
    paddle.set_device("gpu")
    try:
        host, place = _offload.to_host(paddle.randn([4, 4]), blocking=False)
        assert host.place.is_cuda_pinned_place() and place.is_gpu_place()
        expected = _grads(lambda net, x: net(x))
        assert_tensors_equal(_grads(_on_cpu), expected)
        offloaded = policies.offload(policies.save_matmuls)
        assert_tensors_equal(_grads(lambda net, x: net(x, inner=offloaded)), expected)
    finally:
        paddle.set_device("cpu")
