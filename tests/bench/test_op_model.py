"""``bench.operator_graphs`` and ``bench.predicted_reruns``: the planner's operator model of a
block, and what it predicts a region keeping a share of the block's saved bytes reruns,
checked against the rerun of a region under that kept set."""

import paddle
import pytest
from paddle import nn

import paddle_recompute as pr
from paddle_recompute import bench
from paddle_recompute.policies import OpPolicy


def _model():
    paddle.seed(0)
    return nn.Sequential(*[nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 8))
                           for _ in range(2)])


def _input():
    x = paddle.randn([4, 8])
    x.stop_gradient = False
    return x


def test_each_blocks_operators_are_recorded():
    graphs = bench.operator_graphs(_model(), _input())
    assert set(graphs) == {"0", "1"}
    assert [o.name for o in graphs["0"].ops] == ["linear", "gelu", "linear"]
    # backward needs the block input (held anyway) and the first two operators' outputs
    assert sorted(s.producer for s in graphs["0"].slots if s.producer is not None) == [0, 1]


def test_the_ends_of_the_frontier():
    graph = bench.operator_graphs(_model(), _input())["0"]
    nothing, everything = bench.predicted_reruns(graph, [0.0, 1.0])
    assert (nothing.keep, nothing.memory, nothing.model_time, nothing.run) == ([], 0.0, 1.0, 2)
    assert (everything.keep, everything.memory, everything.model_time, everything.run) == (
        [0, 1], 1.0, 0.0, 0)


@pytest.mark.parametrize("fraction", [0.0, 0.5, 1.0])
def test_a_region_under_the_kept_set_reruns_what_the_model_predicts(fraction):
    model, x = _model(), _input()
    graph = bench.operator_graphs(model, x)["0"]
    (point,) = bench.predicted_reruns(graph, [fraction])
    policy = OpPolicy(tuple(o.name for o in graph.ops), frozenset(point.keep))
    with bench.measured_regions() as finished:
        pr.recompute(model[0], x, use_reentrant=False, policy=policy).sum().backward()
    (frame,) = finished
    reruns = frame.reruns or [bench.RerunCounts(0, 0, 0, 0, 0)]  # everything kept: no rerun
    assert [(r.ran, r.skipped) for r in reruns] == [(point.run, point.skipped)]
