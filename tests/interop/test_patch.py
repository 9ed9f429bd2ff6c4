"""patch_paddle / unpatch_paddle / paddle_patched: Paddle's own entry points run ours, and back.

Names bound before the patch come from ``_patch_early`` (imported at collection, before any
test patches); names looked up after it come from the modules at call time.
"""

import importlib
import inspect
import sys

import _patch_early
import numpy as np
import paddle
import pytest
from paddle import nn

import paddle_recompute
from paddle_recompute import is_patched, paddle_patched, patch_paddle, unpatch_paddle
from paddle_recompute._entry import recompute as _api
from paddle_recompute._interop import patch as _patch

MODULE = "paddle.distributed.fleet.recompute.recompute"


def late_recomputes():
    """The entry points as a library importing them now (after patching) would get them."""
    return {"fleet.utils.recompute": importlib.import_module("paddle.distributed.fleet.utils").recompute,
            "fleet.recompute.recompute.recompute": sys.modules[MODULE].recompute,
            "fleet.recompute.recompute (package)": importlib.import_module(
                "paddle.distributed.fleet.recompute").recompute}


def late_sequentials():
    return {"incubate.distributed.fleet.recompute_sequential":
            importlib.import_module("paddle.incubate.distributed.fleet").recompute_sequential,
            "fleet.recompute.recompute.recompute_sequential": sys.modules[MODULE].recompute_sequential}


class KwOnly(nn.Layer):
    """A block with a keyword-only argument: Paddle's reentrant recompute rejects it, ours runs it."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x, *, scale):
        return paddle.tanh(self.fc(x)) * scale


@pytest.fixture
def spy(monkeypatch):
    """Counts our reentrant and non-reentrant regions."""
    counts = {"reentrant": 0, "non_reentrant": 0}
    for name, key in (("run_reentrant", "reentrant"), ("run_non_reentrant", "non_reentrant")):
        original = getattr(_api, name)

        def counting(*args, _original=original, _key=key, **kwargs):
            counts[_key] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(_api, name, counting)
    return counts


pytestmark = pytest.mark.usefixtures("never_left_patched")


def grads(call, block, x):
    """Gradients of x and of every parameter after ``call(block, x).sum().backward()``."""
    x = x.detach()
    x.stop_gradient = False
    call(block, x).sum().backward()
    out = [x.grad.numpy()] + [p.grad.numpy() for p in block.parameters()]
    block.clear_gradients()
    return out


def test_covered_names_are_the_two_patched_functions_or_delegate_to_them():
    module = sys.modules[MODULE]
    assert _patch_early.module_recompute is module.recompute is _patch_early.package_recompute
    assert _patch_early.incubate_sequential is module.recompute_sequential
    # fleet.utils.recompute is a separate function that calls fleet.recompute.recompute at call time
    assert _patch_early.utils_recompute is not module.recompute
    assert "fleet.recompute.recompute(" in inspect.getsource(_patch_early.utils_recompute)


@pytest.mark.parametrize("use_reentrant", [True, False])
@pytest.mark.parametrize("bound", ["early", "late"])
def test_patched_entry_points_run_ours(bound, use_reentrant, spy):
    block, x = KwOnly(), paddle.randn([3, 6])
    expected = grads(lambda b, t: b(t, scale=2.0), block, x)
    with paddle_patched():
        names = _patch_early.RECOMPUTES if bound == "early" else late_recomputes()
        for name, fn in names.items():
            got = grads(lambda b, t, fn=fn: fn(b, t, scale=2.0, use_reentrant=use_reentrant), block, x)
            for a, e in zip(got, expected, strict=True):
                np.testing.assert_array_equal(a, e, err_msg=name)
    key = "reentrant" if use_reentrant else "non_reentrant"
    assert spy[key] == len(names) and sum(spy.values()) == len(names)


@pytest.mark.parametrize("bound", ["early", "late"])
def test_patched_sequential_runs_ours(bound, spy):
    model = nn.Sequential(*[nn.Linear(6, 6) for _ in range(4)])
    x = paddle.randn([3, 6])
    expected = grads(lambda m, t: m(t), model, x)
    with paddle_patched():
        names = _patch_early.SEQUENTIALS if bound == "early" else late_sequentials()
        for name, fn in names.items():
            got = grads(lambda m, t, fn=fn: fn({"segments": 2}, m, t), model, x)
            for a, e in zip(got, expected, strict=True):
                np.testing.assert_array_equal(a, e, err_msg=name)
    assert spy["reentrant"] == len(names)  # one recomputed segment (of 2) per call


def test_unpatch_restores_the_exact_originals(spy):
    module = sys.modules[MODULE]
    functions = [module.recompute, module.recompute_sequential]
    codes = [f.__code__ for f in functions]
    before = {**late_recomputes(), **late_sequentials()}
    patch_paddle()
    assert all(f.__code__ is not c for f, c in zip(functions, codes, strict=True))
    unpatch_paddle()
    assert all(f.__code__ is c for f, c in zip(functions, codes, strict=True))
    after = {**late_recomputes(), **late_sequentials()}
    assert all(after[name] is before[name] for name in before)
    # and Paddle's own code runs again, early-bound names included
    block, x = KwOnly(), paddle.randn([3, 6])
    x.stop_gradient = False
    for fn in _patch_early.RECOMPUTES.values():
        with pytest.raises(ValueError, match="keyword-only arguments are not supported"):
            fn(block, x, scale=2.0, use_reentrant=True)
    assert sum(spy.values()) == 0


def test_patch_is_idempotent_and_the_context_keeps_an_outer_patch():
    code = sys.modules[MODULE].recompute.__code__
    patch_paddle()
    patch_paddle()
    with paddle_patched():
        assert is_patched()
    assert is_patched(), "paddle_patched() must leave a patch made before it in place"
    unpatch_paddle()
    assert not is_patched() and sys.modules[MODULE].recompute.__code__ is code
    unpatch_paddle()  # a no-op


def test_context_unpatches_after_an_error():
    with pytest.raises(RuntimeError, match="boom"), paddle_patched():
        assert is_patched()
        raise RuntimeError("boom")
    assert not is_patched()


def test_failing_import_patches_nothing(monkeypatch):
    code = sys.modules[MODULE].recompute.__code__
    monkeypatch.setattr(_patch, "_TARGETS", _patch._TARGETS + (("no_such_paddle_module_xyz", "recompute"),))
    with pytest.raises(ModuleNotFoundError):
        patch_paddle()
    assert not is_patched() and sys.modules[MODULE].recompute.__code__ is code


def test_patched_options_reach_ours(spy):
    """Paddle-style options (preserve_rng_state, offload_indices) pass through the shim."""
    block = nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.5))
    x = paddle.randn([3, 6])
    paddle.seed(7)
    expected = grads(lambda b, t: b(t), block, x)
    with paddle_patched():
        paddle.seed(7)
        got = grads(lambda b, t: _patch_early.utils_recompute(b, t, preserve_rng_state=True,
                                                               offload_indices=[0]), block, x)
    for a, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(a, e)
    assert spy["reentrant"] == 1
    assert paddle_recompute.recompute is _api.recompute
