"""Dropout mask replay (``policies.save_dropout_masks``): parity, no kernel rerun, bytes held."""

import gc

import numpy as np
import paddle
import paddle.nn.functional as F
import pytest
from _op_counts import counting_ops
from _rc_helpers import assert_matches_plain, requires_grad
from paddle import nn
from paddle.base import core

from paddle_recompute import policies, recompute
from paddle_recompute._core import hooks as _hooks
from paddle_recompute._core import ops as _ops
from paddle_recompute._selective import dropout_replay as _dropout_replay

MASKS_AND_MATMULS = policies.save_any_of(policies.save_matmuls_no_batch, policies.save_dropout_masks)
MODES = ("upscale_in_train", "downscale_in_infer")


@pytest.fixture(autouse=True)
def fresh_verdicts(monkeypatch):
    """Every test calibrates inside its region (parity then also proves the probe left RNG alone)."""
    monkeypatch.setattr(_dropout_replay, "verdicts", {})


class Attention(nn.Layer):
    """Scores, softmax, dropout of the probabilities, probabilities times values."""

    def __init__(self, p, mode, width=16, heads=2):
        super().__init__()
        self.p, self.mode, self.heads = p, mode, heads
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(x).reshape([b, s, 3, self.heads, h // self.heads]).transpose(
            [2, 0, 3, 1, 4]).unbind(0)
        probs = F.softmax(paddle.matmul(q, k, transpose_y=True), axis=-1)
        probs = F.dropout(probs, self.p, training=True, mode=self.mode)
        return self.proj(paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([b, s, h]))


class MLP(nn.Layer):
    """Linear, GELU, dropout, linear, dropout (the second feeds the region output)."""

    def __init__(self, p, mode, width=16):
        super().__init__()
        self.p, self.mode = p, mode
        self.fc1, self.fc2 = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def forward(self, x):
        h = F.dropout(F.gelu(self.fc1(x)), self.p, training=True, mode=self.mode)
        return F.dropout(self.fc2(h), self.p, training=True, mode=self.mode) * 2.0


LAYERS = {"attention": (Attention, 1), "mlp": (MLP, 2)}  # class, dropout calls per forward


def maker(kind, p, mode):
    def make():
        layer = LAYERS[kind][0](p, mode)
        x = requires_grad(paddle.randn([2, 8, 16]))
        return layer, (x,), {}, [x, *layer.parameters()]

    return make


@pytest.mark.parametrize("kind", LAYERS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("p", [0.1, 0.5])
def test_parity_and_the_dropout_kernel_does_not_rerun(kind, mode, p):
    with counting_ops("dropout", "linear") as counts:
        assert_matches_plain(maker(kind, p, mode), use_reentrant=False, policy=MASKS_AND_MATMULS)
    calls = LAYERS[kind][1]
    # counted inside regions only: the forward ran them; the recomputation rebuilt every
    # dropout output and skipped both kept linears
    assert counts == {"dropout": calls, "linear": 2}
    assert list(_dropout_replay.verdicts.values()) == ["numpy"]


@pytest.mark.parametrize("policy", [policies.save_dropout_masks,
                                    policies.offload(policies.save_dropout_masks)],
                         ids=["device", "offload"])
def test_masks_alone_rebuild_dropout_but_rerun_the_rest(policy):
    with counting_ops("dropout", "linear") as counts:
        assert_matches_plain(maker("mlp", 0.3, MODES[0]), use_reentrant=False, policy=policy)
    # forward: 2 linears, 2 dropouts; the rerun runs the first linear, rebuilds the first
    # dropout and stops before the second linear (its saved input is all it needs):
    # NOTE [ Unreachable outputs ]
    assert counts == {"dropout": 2, "linear": 3}


def test_a_wrong_rebuild_is_caught_by_calibration_and_the_kernel_reruns(monkeypatch):
    def wrong(x, mask, p, mode):
        return x * 1.0  # dropped elements are not zeroed: never bit-identical

    monkeypatch.setattr(_dropout_replay, "FORMULAS", {"wrong": wrong})
    with counting_ops("dropout") as counts:
        assert_matches_plain(maker("mlp", 0.5, MODES[0]), use_reentrant=False,
                             policy=MASKS_AND_MATMULS)
    assert counts == {"dropout": 4}  # region forward 2, recomputation 2
    assert list(_dropout_replay.verdicts.values()) == [None]


def test_calibration_rejects_the_gpu_arithmetic_on_this_cpu():
    """x * (1 / (1 - p)) differs from the CPU kernel's x / (1 - p) for p = 0.1 (not for 0.5)."""
    x = paddle.randn([4])
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_dropout_replay, "FORMULAS", {"multiply": _dropout_replay.FORMULAS["multiply"]})
        assert _dropout_replay._calibrate(x, 0.1, "upscale_in_train") is None
        assert _dropout_replay._calibrate(x, 0.5, "upscale_in_train") == "multiply"


@pytest.mark.parametrize("name", ["numpy", "divide"])
@pytest.mark.parametrize("mode", ["upscale_in_train", "downgrade_in_infer"])
def test_each_cpu_formula_matches_the_kernel_bit_for_bit(name, mode):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_dropout_replay, "FORMULAS", {name: _dropout_replay.FORMULAS[name]})
        for p in (0.1, 0.3, 0.5, 0.9):
            assert _dropout_replay._calibrate(paddle.randn([4], "float64"), p, mode) == name
            assert _dropout_replay._calibrate(paddle.randn([4]), p, mode) == name


def test_calibration_leaves_the_generators_as_they_were():
    x = paddle.randn([4])
    paddle.seed(11)
    expected = paddle.rand([4]).numpy()
    paddle.seed(11)
    _dropout_replay._calibrate(x, 0.2, "upscale_in_train")
    np.testing.assert_array_equal(paddle.rand([4]).numpy(), expected)


def test_without_preserved_rng_state_masks_are_not_kept():
    with counting_ops("dropout") as counts:
        paddle.seed(0)
        x = requires_grad(paddle.randn([2, 8, 16]))
        out = recompute(MLP(0.5, MODES[0]), x, use_reentrant=False,
                        policy=policies.save_dropout_masks, preserve_rng_state=False)
        out.sum().backward()
    assert counts == {"dropout": 4}  # rerun: nothing to set the generators to after a skip
    assert not _ops.is_installed() and not _hooks.active_frames()


def _held(policy, batch=64, width=128):
    layer = MLP(0.5, MODES[0], width)
    x = requires_grad(paddle.randn([batch, width]))
    gc.collect()
    gc.disable()
    try:
        before = core.host_memory_stat_current_value("Allocated", 0)
        out = recompute(layer, x, use_reentrant=False, policy=policy)
        held = core.host_memory_stat_current_value("Allocated", 0) - before
    finally:
        gc.enable()
    out.sum().backward()
    return held


def test_only_the_masks_are_held():
    nothing, masks = _held(policies.recompute_all), _held(policies.save_dropout_masks)
    mask_bytes = 64 * 4 * 128 + 64 * 128  # one byte an element, both dropouts
    # the only difference is the masks (the allocator rounds each block up to 64 bytes)
    assert 0 <= masks - nothing - mask_bytes <= 2 * 64
    assert masks - nothing < 64 * 4 * 128 * 4  # less than the first dropout's float output alone


@pytest.mark.parametrize("level", ["O1", "O2"])
def test_parity_inside_autocast(level):
    """The rebuild runs with AMP off: it reproduces the kernel's own dtype arithmetic."""

    def make():
        layer = MLP(0.3, MODES[0])
        x = requires_grad(paddle.randn([2, 8, 16]))

        def fn(x):
            with paddle.amp.auto_cast(level=level, dtype="bfloat16"):
                return layer(x).astype("float32")

        return fn, (x,), {}, [x, *layer.parameters()]

    with counting_ops("dropout") as counts:
        assert_matches_plain(make, use_reentrant=False, policy=MASKS_AND_MATMULS)
    assert counts == {"dropout": 2}
    assert list(_dropout_replay.verdicts.values()) == ["numpy"]


def test_bfloat16_dropout_has_no_cpu_formula_and_reruns():
    """No formula matches here (numpy has no bfloat16, ``where`` no bfloat16 CPU kernel)."""

    def make():
        x = requires_grad(paddle.randn([4, 32]))

        def fn(x):
            return F.dropout(x.astype("bfloat16"), 0.3).astype("float32") * x

        return fn, (x,), {}, [x]

    with counting_ops("dropout") as counts:
        assert_matches_plain(make, use_reentrant=False, policy=policies.save_dropout_masks)
    assert counts == {"dropout": 2}  # forward and recomputation
    assert list(_dropout_replay.verdicts.values()) == [None]
