"""The mechanism's seam (NOTE [ Non-reentrant frames ]): a ``Frame`` subclass, constructed
whole and passed as ``make_frame``, overrides the documented hooks and nothing else."""

from __future__ import annotations

import numpy as np
import paddle
from paddle import nn

from paddle_recompute._core.nonreentrant import Frame, Handle, Recomputation, run_non_reentrant


class Logged(Frame):
    __slots__ = ("events",)

    def __init__(self, events, function, args, kwargs, **fields):
        super().__init__(function, args, kwargs, **fields)
        self.events = events

    def pack(self, tensor):
        self.events.append("pack")
        return super().pack(tensor)

    def finish(self, early_stop):
        super().finish(early_stop)
        self.events.append("finish")

    def recomputation(self, needed):
        self.events.append(f"rerun for {len(needed)}")
        return CountedRecomputation(self, needed)

    def recompute(self):
        self.events.append("recompute")
        super().recompute()


class CountedRecomputation(Recomputation):
    __slots__ = ()

    def pack(self, tensor):
        self.frame.events.append("repack")
        return super().pack(tensor)


def _run(block, x, make_frame):
    return run_non_reentrant(block, (x,), {}, state_roots=(block,), preserve_rng_state=True,
                             offload=(), check=True, early_stop=False, debug=False,
                             make_frame=make_frame)


def test_a_frame_subclass_runs_its_hooks_and_keeps_the_results():
    paddle.seed(0)
    block = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
    x = paddle.randn([2, 4])
    x.stop_gradient = False
    expected = paddle.grad(block(x).sum(), [x])[0].numpy()
    events: list = []
    out = _run(block, x, lambda *a, **kw: Logged(events, *a, **kw))
    packs = events.count("pack")
    assert packs > 0 and events[-1] == "finish"
    got = paddle.grad(out.sum(), [x])[0].numpy()
    np.testing.assert_array_equal(got, expected)
    rerun = events[packs + 1:]
    # every saved tensor was needed but the leaves, which stay themselves (NOTE [ Saved
    # leaves ]): the input x and the two weights
    assert rerun[:2] == ["recompute", f"rerun for {packs - 3}"]
    assert rerun.count("repack") == packs


def test_the_constructor_takes_every_field():
    x = paddle.ones([2])
    x.stop_gradient = False
    frame = Frame(paddle.tanh, (x,), {}, state=None, debug=True)
    assert frame.leaves[0] is x and frame.refs == [] and frame.storage == {}
    assert frame.trace == [] and frame.check and frame.kept is None and frame.observing() is None
    handle = frame.pack(paddle.tanh(x))  # not a leaf: a leaf is kept as itself
    assert isinstance(handle, Handle) and handle.index == 0 and frame.refs[0]() is handle
