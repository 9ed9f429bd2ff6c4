"""What rides on a parameter object, inside regions, in both modes: attributes read in the
forward, gradient hooks, ``stop_gradient`` changed between forward and backward (LoRA-style
freezing), parameters replaced between steps, AMP O2 with master gradients.

The reentrant rerun runs with detached aliases of the parameters (NOTE [ Reentrant inputs ]);
they carry the parameters' attributes, so the forward reads the same values in the rerun.
"""

from __future__ import annotations

import numpy as np
import paddle
import pytest
from _rc_helpers import seed_all
from paddle import nn

from paddle_recompute import recompute

STEPS, MICRO = 3, 2


def _region(mode):
    if mode is None:
        return lambda f, x: f(x)
    return lambda f, x: recompute(f, x, use_reentrant=mode)


class Reader(nn.Layer):
    """Reads what large-model code reads on a weight in its forward."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.out = nn.Linear(4, 4)
        self.seen = []

    def forward(self, x):
        w = self.fc.weight
        self.seen.append((
            getattr(w, "sequence_parallel", False), w.is_distributed, w.need_clip,
            dict(w.optimize_attr), getattr(w, "tp_role", None), w.trainable, w.name,
            hasattr(w, "main_grad"),
        ))
        h = paddle.tanh(self.fc(x))
        if getattr(w, "sequence_parallel", False):  # a forward that branches on the mark
            h = h * 2.0
        return self.out(h)


def _marked_reader():
    seed_all()
    m = Reader()
    w = m.fc.weight
    w.sequence_parallel = True
    w.is_distributed = True
    w.need_clip = False
    w.optimize_attr = {"learning_rate": 0.5}
    w.tp_role = "column"
    w.main_grad = None
    return m


def test_attributes_read_in_the_forward_are_the_parameter_s_in_the_rerun(use_reentrant):
    x = paddle.randn([2, 4]) * 1
    want = _marked_reader()
    want(x).sum().backward()
    m = _marked_reader()
    recompute(m, x, use_reentrant=use_reentrant).sum().backward()
    assert len(m.seen) == 2, "the region did not rerun"
    assert m.seen[0] == m.seen[1]  # the rerun read what the forward read
    assert m.seen[0][:6] + m.seen[0][7:] == want.seen[0][:6] + want.seen[0][7:]  # names: another model
    for a, b in zip(m.parameters(), want.parameters(), strict=True):
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.a = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 6))
        self.b = nn.Sequential(nn.Linear(6, 8), nn.GELU(), nn.Linear(8, 6))
        self.head = nn.Linear(6, 1)

    def forward(self, x, region):
        return self.head(region(self.b, region(self.a, x)))


def _data():
    seed_all(7)
    return [paddle.randn([4, 6]) for _ in range(STEPS * MICRO)]


def _train(region, *, prepare=None, between=None):
    """STEPS SGD steps of MICRO micro-batches: losses, gradients before each step, params."""
    seed_all()
    net = Net()
    state = prepare(net) if prepare is not None else None
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
    losses, grads = [], []
    data = _data()
    for step in range(STEPS):
        for micro in range(MICRO):
            loss = (net(data[step * MICRO + micro], region) ** 2).mean()
            loss.backward()
            losses.append(loss.numpy())
        grads.append([None if p.grad is None else p.grad.numpy().copy() for p in net.parameters()])
        opt.step()
        opt.clear_grad()
        if between is not None:
            between(net, step)
    return losses, grads, [p.numpy() for p in net.parameters()], state


def _assert_same(got, want):
    for a, b in zip(got[0], want[0], strict=True):
        np.testing.assert_array_equal(a, b)
    for s1, s2 in zip(got[1], want[1], strict=True):
        for a, b in zip(s1, s2, strict=True):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_array_equal(a, b)
    for a, b in zip(got[2], want[2], strict=True):
        np.testing.assert_array_equal(a, b)


def _hooked(net):
    """A gradient hook that scales (register_hook) and one that counts after accumulation
    (_register_backward_hook, as Paddle's sequence-parallel hooks) on every parameter."""
    counts = {}
    for name, p in net.named_parameters():
        p.register_hook(lambda g: g * 0.5)
        counts[name] = 0

        def count(name=name):
            counts[name] += 1

        p._register_backward_hook(count)
    return counts


def test_gradient_hooks_on_parameters(use_reentrant):
    want = _train(_region(None), prepare=_hooked)
    got = _train(_region(use_reentrant), prepare=_hooked)
    _assert_same(got, want)
    assert got[3] == want[3] and set(want[3].values()) == {STEPS * MICRO}  # once per backward


@pytest.mark.parametrize("when", ["before_forward", "between_forward_and_backward"])
def test_stop_gradient_changed(use_reentrant, when):
    """Freezing a layer's weights (LoRA-style fine-tuning) before the forward, or between a
    forward and its backward: what Paddle does without recompute, in both modes."""

    def run(region):
        seed_all()
        net = Net()
        data = _data()
        frozen = [net.a[0].weight, net.a[2].weight]
        if when == "before_forward":
            for p in frozen:
                p.stop_gradient = True
        loss = (net(data[0], region) ** 2).mean()
        if when != "before_forward":
            for p in frozen:
                p.stop_gradient = True
        loss.backward()
        return loss, [p.grad for p in net.parameters()]

    want_loss, want = run(_region(None))
    got_loss, got = run(_region(use_reentrant))
    np.testing.assert_array_equal(got_loss.numpy(), want_loss.numpy())
    for a, b in zip(got, want, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("how", ["set_value", "set_state_dict"])
def test_parameters_replaced_between_steps(use_reentrant, how):
    """Between steps the weights are overwritten (a checkpoint loaded, an EMA swapped in)."""
    seed_all(11)
    other = Net()
    source = {k: v.numpy() * 0.5 for k, v in other.state_dict().items()}

    def replace(net, step):
        if step != 0:
            return
        if how == "set_value":
            for name, p in net.named_parameters():
                p.set_value(source[name])
        else:
            net.set_state_dict({k: paddle.to_tensor(v) for k, v in source.items()})

    want = _train(_region(None), between=replace)
    got = _train(_region(use_reentrant), between=replace)
    _assert_same(got, want)


def test_amp_o2_bfloat16_master_grad(use_reentrant):
    """AMP O2 bfloat16 with ``master_grad=True``: bit-equal to no recompute."""

    def run(region):
        seed_all()
        net = Net()
        opt = paddle.optimizer.AdamW(learning_rate=0.01, parameters=net.parameters())
        net, opt = paddle.amp.decorate(net, opt, level="O2", dtype="bfloat16", master_grad=True)
        losses, grads = [], []
        data = _data()
        for step in range(STEPS):
            for micro in range(MICRO):
                with paddle.amp.auto_cast(level="O2", dtype="bfloat16"):
                    loss = (net(data[step * MICRO + micro], region).astype("float32") ** 2).mean()
                loss.backward()
                losses.append(loss.numpy())
            grads.append([p.grad.astype("float32").numpy() for p in net.parameters()])
            opt.step()
            opt.clear_grad()
        return losses, grads, [p.astype("float32").numpy() for p in net.parameters()]

    want = run(_region(None))
    got = run(_region(use_reentrant))
    assert all(g.dtype == np.float32 for g in want[1][0])
    _assert_same(got, want)
