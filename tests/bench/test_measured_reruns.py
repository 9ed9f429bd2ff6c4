"""``bench.measured_regions`` counts each rerun's operator calls (``RerunCounts``): what a
policy's rerun ran, skipped, rebuilt from kept masks."""

import paddle
import pytest
from paddle import nn

import paddle_recompute as pr
from paddle_recompute import bench, policies


@pytest.mark.parametrize("policy, counts", [
    # every operator is numbered: tanh saves its own output, so the rerun reaches it
    (policies.recompute_all, {"observed": 5, "skipped": 0, "rebuilt": 0}),
    (policies.save_matmuls, {"observed": 5, "skipped": 2, "rebuilt": 0}),
    (policies.save_dropout_masks, {"observed": 5, "skipped": 0, "rebuilt": 1}),
])
def test_each_rerun_is_counted(policy, counts):
    paddle.seed(0)
    block = nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 8), nn.Dropout(0.5), nn.Tanh())
    x = paddle.randn([4, 8])
    x.stop_gradient = False
    with bench.measured_regions() as finished:
        pr.recompute(block, x, use_reentrant=False, policy=policy).sum().backward()
    (frame,) = finished
    (rerun,) = frame.reruns
    assert isinstance(rerun, bench.RerunCounts) and frame.rerun_ns > 0
    assert {k: getattr(rerun, k) for k in counts} == counts
    assert rerun.ran + rerun.skipped + rerun.rebuilt >= rerun.observed and rerun.left_out == 0


def test_a_region_without_backward_has_no_reruns():
    with bench.measured_regions() as finished:
        x = paddle.ones([2])
        x.stop_gradient = False
        pr.recompute(lambda h: h * 2, x, use_reentrant=False, policy=policies.recompute_all)
    assert [f.reruns for f in finished] == [[]]
