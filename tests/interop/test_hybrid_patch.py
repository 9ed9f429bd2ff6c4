"""patch_paddle() routes Paddle's recompute_hybrid to ours at every binding site, and back.

Names bound before the patch come from ``_hybrid_early`` (imported at collection, as
PipelineLayer's and MoELayer's modules bind it); ``late`` names are looked up after it.
"""

import importlib
import sys
import types

import _hybrid_early
import numpy as np
import paddle
import pytest
from _rc_helpers import requires_grad, seed_all
from paddle import nn

from paddle_recompute import paddle_patched, patch_paddle, unpatch_paddle
from paddle_recompute._interop import hybrid

CPU_REFUSAL = "Recompute with RNG is not support current device: cpu"


class Solo:
    nranks, rank = 1, 0


def late_hybrids():
    """The names as code importing them now would get them."""
    return {"fleet.recompute.recompute_hybrid (package)": importlib.import_module(
                "paddle.distributed.fleet.recompute").recompute_hybrid,
            "incubate.distributed.fleet.recompute_hybrid": importlib.import_module(
                "paddle.incubate.distributed.fleet").recompute_hybrid,
            "pp_layers.recompute_hybrid (PipelineLayer)": importlib.import_module(
                "paddle.distributed.fleet.meta_parallel.parallel_layers.pp_layers").recompute_hybrid}


pytestmark = pytest.mark.usefixtures("never_left_patched")


@pytest.fixture
def calls(monkeypatch):
    """Counts our hybrid regions."""
    seen = []
    original = hybrid.run_reentrant

    def counting(*args, **kwargs):
        seen.append(kwargs["api"])
        return original(*args, **kwargs)

    monkeypatch.setattr(hybrid, "run_reentrant", counting)
    return seen


def grads(call):
    seed_all()
    block = nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.5), nn.Tanh())
    x, mask = requires_grad(paddle.randn([3, 6])), paddle.randn([3, 6])
    call(block, x, mask).sum().backward()
    return [x.grad.numpy()] + [p.grad.numpy() for p in block.parameters()]


def test_every_binding_site_is_one_function_object():
    """The patch swaps one function's code, so it must be the only recompute_hybrid."""
    functions = set(map(id, _hybrid_early.HYBRIDS.values()))
    assert len(functions) == 1
    loaded = {name: module.recompute_hybrid for name, module in list(sys.modules.items())
              if isinstance(getattr(module, "recompute_hybrid", None), types.FunctionType)
              and name.startswith("paddle.")}
    assert len(loaded) >= len(_hybrid_early.HYBRIDS) - 1  # the package and its module share a name
    assert set(map(id, loaded.values())) == functions, sorted(loaded)


@pytest.mark.parametrize("bound", ["early", "late"])
def test_patched_names_run_ours_with_partition_and_two_tensors(bound, calls):
    expected = grads(lambda b, x, m: b(x) * m)
    ctx = {"mp_group": Solo(), "partition": True, "offload": True}
    with paddle_patched():
        names = _hybrid_early.HYBRIDS if bound == "early" else late_hybrids()
        for name, fn in names.items():
            got = grads(lambda b, x, m, fn=fn: fn(ctx, lambda h, k: b(h) * k, x, m))
            for a, e in zip(got, expected, strict=True):
                np.testing.assert_array_equal(a, e, err_msg=name)
    assert calls == ["recompute_hybrid"] * len(names)


def test_unpatch_restores_paddle_s_own(calls):
    fn = _hybrid_early.HYBRIDS["pp_layers.recompute_hybrid (PipelineLayer)"]
    code = fn.__code__
    patch_paddle()
    assert fn.__code__ is not code
    unpatch_paddle()
    assert fn.__code__ is code
    x = requires_grad(paddle.randn([2, 3]))
    for f in _hybrid_early.HYBRIDS.values():  # Paddle's own refuses CPU
        with pytest.raises(AssertionError, match=CPU_REFUSAL):
            f({"mp_group": Solo()}, nn.Linear(3, 3), x)
    assert calls == []
