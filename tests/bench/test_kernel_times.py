"""``bench.kernel_times``: the kernels a body runs, per operator, with a policy region's
rerun included (the kernels it skips or rebuilds are not run), and ``paddle._C_ops`` put
back afterwards."""

import paddle
import pytest
from paddle import nn

import paddle_recompute as pr
from paddle_recompute import bench, policies


def _block():
    paddle.seed(0)
    return nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 8), nn.Dropout(0.5), nn.Tanh())


def _rerun_kernels(policy) -> dict:
    """Calls per kernel in the backward of a region under ``policy`` (its rerun)."""
    block, x = _block(), paddle.randn([4, 8])
    x.stop_gradient = False
    with bench.kernel_times() as spent:
        loss = pr.recompute(block, x, use_reentrant=False, policy=policy).sum()
        assert spent["linear"][0] == 2 and spent["tanh"][0] == 1  # the forward's
        spent.clear()
        loss.backward()
    assert all(seconds > 0 for _, seconds in spent.values())
    return {name: calls for name, (calls, _) in spent.items()}


@pytest.mark.parametrize("policy, kernels", [
    # the rerun stops at dropout, whose output the last operator saves
    (policies.recompute_all, {"linear": 2, "gelu": 1, "dropout": 1}),
    (policies.save_matmuls, {"gelu": 1, "dropout": 1}),  # the kept linear outputs are skipped
    (policies.save_dropout_masks, {"linear": 2, "gelu": 1, "dropout(rebuilt)": 1}),
])
def test_a_policy_regions_rerun_kernels_are_timed(policy, kernels):
    assert _rerun_kernels(policy) == kernels


def test_kernels_are_put_back_also_after_an_error():
    gelu = paddle._C_ops.gelu
    with pytest.raises(RuntimeError, match="stop"), bench.kernel_times() as spent:
        paddle.nn.functional.gelu(paddle.ones([2]))
        assert paddle._C_ops.gelu is not gelu
        raise RuntimeError("stop")
    assert spent["gelu"][0] == 1
    assert paddle._C_ops.gelu is gelu


def test_inside_a_policy_region_it_says_to_enter_it_outside():
    def body(h):
        with bench.kernel_times():
            return h * 2

    x = paddle.ones([2])
    x.stop_gradient = False
    with pytest.raises(pr.RecomputeError, match=r"bench.kernel_times: entered inside a policy region"):
        pr.recompute(body, x, use_reentrant=False, policy=policies.recompute_all)
