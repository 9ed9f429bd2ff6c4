"""Recompute inside ``paddle.DataParallel``: two CPU processes over gloo.

One ``paddle.distributed.spawn`` (a few seconds) runs every scenario of ``_dp_worker.py``
in both processes; the tests compare what the workers saved with runs in this process.
"""

import glob
import os

import _dp_worker
import _spawn
import numpy as np
import pytest

MODES = ["reentrant", "non_reentrant"]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out_dir = str(tmp_path_factory.mktemp("dp"))
    _spawn.spawn(_dp_worker.worker, out_dir, expected_errors=("dp-shared_closure-reentrant",),
                 skip_if_nothing_ran=True)
    return out_dir


def load(out_dir, name) -> dict:
    prefix = os.path.join(out_dir, f"{name}--")
    files = sorted(glob.glob(prefix + "*.npy"))
    assert files, f"no results for {name}"
    return {path[len(prefix):-4]: np.load(path) for path in files}


def initial_parameters(layout):
    import paddle

    paddle.seed(2024)
    model = _dp_worker.Net(layout, None)
    return {name.replace(".", "_"): p.numpy() for name, p in model.named_parameters()}


def single_process(layout):
    """The same 5 steps in this process, on the whole global batch, without recompute."""
    params = _dp_worker.train(layout, None, rank=None)
    return {name.replace(".", "_"): value for name, value in params.items()}


@pytest.mark.parametrize("layout", ["block", "shared_layer"])
@pytest.mark.parametrize("mode", MODES)
def test_data_parallel_parameters_equal_no_recompute(results, layout, mode):
    got = load(results, f"dp-{layout}-{mode}-rank0")
    dp_plain = load(results, f"dp-{layout}-plain-rank0")
    reference = single_process(layout)
    assert got.keys() == dp_plain.keys() == reference.keys()
    for name in reference:
        # Recompute changes nothing in a DataParallel run: bit-for-bit the run without it.
        np.testing.assert_array_equal(got[name], dp_plain[name], err_msg=name)
        # Against one process on the global batch: the all-reduce averages per-rank
        # gradients (sum of two half-batch means, then / 2) while one process sums the
        # whole batch in another order, so float32 rounding differs in the last bits.
        np.testing.assert_allclose(got[name], reference[name], rtol=1e-6, atol=1e-7, err_msg=name)
    initial = initial_parameters(layout)
    unchanged = {n for n in reference if np.array_equal(reference[n], initial[n])}
    assert unchanged == ({"shared_weight", "shared_bias"} if layout == "block" else set())  # it trained


def test_non_reentrant_closures_sharing_a_parameter(results):
    """A parameter used in two closure regions: fine in non-reentrant mode."""
    got = load(results, "dp-shared_closure-non_reentrant-rank0")
    dp_plain = load(results, "dp-shared_closure-plain-rank0")
    for name in dp_plain:
        np.testing.assert_array_equal(got[name], dp_plain[name], err_msg=name)


def test_reentrant_closures_sharing_a_parameter_fail_with_a_clear_error(results):
    """Paddle's reducer rejects a parameter made ready twice ("has been ready before",
    Paddle issue #52980).  A reentrant region around a Layer call avoids it (the gradients
    of the parameters leave through the PyLayer, once; see test above with
    ``shared_layer``), but around a closure the rerun's inner backward accumulates into
    the parameters directly.  That must end in an error that names the fixes."""
    for rank in (0, 1):
        path = os.path.join(results, f"error-dp-shared_closure-reentrant-rank{rank}.txt")
        assert os.path.exists(path), "expected the reducer to reject the second gradient"
        message = open(path).read()
        assert "RecomputeError" in message
        assert "has been ready before" in message
        assert "use_reentrant=False" in message
        assert "no_sync" in message


@pytest.mark.parametrize("mode", MODES)
def test_fleet_rng_tracker_streams_are_replayed_per_rank(results, mode):
    per_rank = []
    for rank in (0, 1):
        got = load(results, f"tracker-{mode}-recompute-rank{rank}")
        expected = load(results, f"tracker-{mode}-plain-rank{rank}")
        assert got.keys() == expected.keys() == {"x", "w1", "w2", "next"}
        for name in expected:
            np.testing.assert_array_equal(got[name], expected[name], err_msg=f"rank {rank}: {name}")
        per_rank.append(got)
    # Each rank drew its own dropout mask from its own stream.
    assert not np.array_equal(per_rank[0]["w1"], per_rank[1]["w1"])
    assert not np.array_equal(per_rank[0]["next"], per_rank[1]["next"])
