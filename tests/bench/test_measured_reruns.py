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


def _block_and_input():
    paddle.seed(0)
    block = nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 8), nn.Dropout(0.5), nn.Tanh())
    x = paddle.randn([4, 8])
    x.stop_gradient = False
    return block, x


def _reruns(policy, timed: bool) -> list:
    block, x = _block_and_input()
    with bench.measured_regions() as finished:
        if timed:
            with bench.kernel_times():
                pr.recompute(block, x, use_reentrant=False, policy=policy).sum().backward()
        else:
            pr.recompute(block, x, use_reentrant=False, policy=policy).sum().backward()
    return finished[0].reruns


def _accounted(rerun) -> int:
    return rerun.ran + rerun.skipped + rerun.rebuilt + rerun.left_out


@pytest.mark.parametrize("policy", [policies.recompute_all, policies.save_matmuls,
                                    policies.save_dropout_masks])
def test_counts_are_the_same_under_kernel_times(policy):
    """``observed`` numbers every call that ran, was skipped, rebuilt or left out, the one
    whose kernel handed over the last needed tensor (tanh's output) included.  Under
    ``kernel_times`` the stop comes out of the timer around that kernel, after it ran: it
    was taken for a failed call, un-numbered, and ``ran`` exceeded ``observed`` (5 > 4)."""
    plain, timed = _reruns(policy, False), _reruns(policy, True)
    assert timed == plain
    (rerun,) = timed
    assert rerun.observed == 5 and _accounted(rerun) == rerun.observed


def test_a_call_that_raised_is_neither_numbered_nor_counted_as_ran():
    """A failing call the region catches was not numbered in forward; its kernel did not run."""
    paddle.seed(0)
    linear = nn.Linear(4, 4)

    def body(h):
        h = linear(h)
        try:
            paddle.reshape(h, [3, 5])  # 8 elements: raises, caught
        except ValueError:
            pass
        return paddle.tanh(paddle.reshape(h, [4, 2]))  # the same operator, numbered next

    x = paddle.randn([2, 4])
    x.stop_gradient = False
    with bench.measured_regions() as finished:
        pr.recompute(body, x, use_reentrant=False, policy=policies.recompute_all).sum().backward()
    (rerun,) = finished[0].reruns
    assert (rerun.observed, rerun.ran) == (3, 3)  # linear, reshape, tanh
    assert _accounted(rerun) == rerun.observed
