"""Paddle's tensor-parallel layers with ``main_grad`` inside regions, on two CPU processes
(gloo): ``ColumnParallelLinear`` whose ``InnerOverlapLinear`` PyLayer adds the weight's
gradient into ``weight.main_grad``, an FP8-linear-shaped PyLayer, ``RowParallelLinear``,
under ``MixPrecisionLayer`` + ``MixPrecisionOptimizer`` (see ``_mp_identity_worker``).

Each region must train bit-equal to no recompute (losses, every ``main_grad`` before each of
the 3 steps of 2 micro-batches, parameters after) on both ranks, and every PyLayer backward
must have found ``main_grad`` on the weight: handed a copy, Paddle's layer falls back to
returning the gradient, and the FP8-shaped one drops it.
"""

import _mp_identity_worker as worker
import _spawn
import numpy as np
import pytest

RANKS = (0, 1)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out_dir = str(tmp_path_factory.mktemp("mp_identity"))
    _spawn.spawn(worker.worker, out_dir)
    return out_dir


REGIONS = ["reentrant", "non_reentrant", "policy", "hybrid", "hybrid_partition_offload"]


@pytest.mark.parametrize("region", REGIONS)
def test_tensor_parallel_main_grad_equals_no_recompute(runs, region):
    for rank in RANKS:
        got = _spawn.load(runs, region, rank)
        plain = _spawn.load(runs, "plain", rank)
        assert got.keys() == plain.keys()
        for key in plain:
            if key not in ("calls", "seen"):
                np.testing.assert_array_equal(got[key], plain[key], err_msg=f"rank {rank}: {key}")
        # every backward of the two PyLayers (2 blocks x 2 micro-batches x 3 steps) found main_grad
        n = 2 * 2 * worker.MICRO * worker.STEPS
        assert plain["seen"].tolist() == [n, 0]
        assert got["seen"].tolist() == [n, 0], f"rank {rank}: PyLayers saw the weight without main_grad"
        np.testing.assert_array_equal(got["calls"], 2 * plain["calls"])  # each block reran once
        assert len(set(plain["losses"].ravel())) == worker.STEPS * worker.MICRO  # it trained


@pytest.mark.parametrize("region", [r for r in REGIONS if "partition" not in r])
def test_sequence_parallel_gradient_hooks(runs, region):
    """LayerNorm weights marked ``sequence_parallel``: Paddle's hooks all-reduce their
    ``main_grad`` over the group once per ``MICRO`` backwards, in every region kind."""
    for rank in RANKS:
        got = _spawn.load(runs, f"sp-{region}", rank)
        plain = _spawn.load(runs, "sp-plain", rank)
        assert got.keys() == plain.keys()
        for key in plain:
            if key != "calls":
                np.testing.assert_array_equal(got[key], plain[key], err_msg=f"rank {rank}: {key}")
    norm = [_spawn.load(runs, f"sp-{region}", r)["main_grad_blocks_0_norm_weight"] for r in RANKS]
    np.testing.assert_array_equal(norm[0], norm[1])  # the hooks all-reduced them
    other = [_spawn.load(runs, f"sp-{region}", r)["main_grad_embed_weight"] for r in RANKS]
    assert not np.array_equal(other[0], other[1])  # the ranks saw different data
