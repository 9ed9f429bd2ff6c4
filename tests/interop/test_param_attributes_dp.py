"""``DataParallel.no_sync()`` gradient accumulation with regions (two gloo ranks; see
``_param_attr_worker``): bit-equal to no recompute, and the synchronised step leaves the
same gradients on both ranks."""

import _param_attr_worker as worker
import _spawn
import numpy as np
import pytest

RANKS = (0, 1)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out_dir = str(tmp_path_factory.mktemp("dp_no_sync"))
    _spawn.spawn(worker.worker, out_dir, skip_if_nothing_ran=True)
    return out_dir


@pytest.mark.parametrize("mode", ["reentrant", "non_reentrant"])
def test_no_sync_accumulation_equals_no_recompute(runs, mode):
    for rank in RANKS:
        got = _spawn.load(runs, mode, rank)
        plain = _spawn.load(runs, "plain", rank)
        assert got.keys() == plain.keys()
        for key in plain:
            np.testing.assert_array_equal(got[key], plain[key], err_msg=f"rank {rank}: {key}")
    by_rank = [_spawn.load(runs, mode, r) for r in RANKS]
    for key in by_rank[0]:
        if key.startswith("grad"):  # all-reduced at each step's last micro-batch
            np.testing.assert_array_equal(by_rank[0][key], by_rank[1][key], err_msg=key)
    assert not np.array_equal(by_rank[0]["losses"], by_rank[1]["losses"])  # different data
