"""Every ``paddle.nn`` Layer class in train mode inside a region: bit-equal to no recompute.

Each class in ``tests/_nn_table.py`` runs once plainly and once inside ``recompute()`` per
mode: reentrant, non-reentrant, and non-reentrant with a policy that keeps nothing and with
one that keeps matmuls and dropout masks, all from the same seed.  The loss, the outputs,
the gradients of every parameter and float input, and every parameter and buffer afterwards
(running statistics, power-iteration vectors) must be equal bit for bit, and the region's
body must have run again in backward.  A Paddle class missing from the table fails
:func:`test_table_covers_every_paddle_nn_layer_class`, so new layers are noticed.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap

import numpy as np
import paddle
import pytest
from _nn_table import EXTRAS, LAYERS, Case, Draw, Unrunnable
from _rc_helpers import RunCount, seed_all, tensors_in
from paddle import nn

from paddle_recompute import policies, recompute

MODES = {
    "reentrant": {"use_reentrant": True},
    "non_reentrant": {"use_reentrant": False},
    "policy": {"use_reentrant": False, "policy": policies.recompute_all},
    # Kept operators skipped in the rerun, dropout outputs rebuilt from their kept masks.
    "policy_keep": {"use_reentrant": False,
                    "policy": policies.save_any_of(policies.save_matmuls, policies.save_dropout_masks)},
}
_RUNNABLE = {name: case for name, case in LAYERS.items() if isinstance(case, Case)}
_UNRUNNABLE = {name: case for name, case in LAYERS.items() if isinstance(case, Unrunnable)}
_CASES = {**_RUNNABLE, **EXTRAS}


def paddle_nn_layer_classes() -> dict[str, type]:
    """The Layer classes ``paddle.nn`` exports, by class name (aliases counted once)."""
    found = {}
    for export in dir(nn):
        value = getattr(nn, export)
        if inspect.isclass(value) and issubclass(value, nn.Layer):
            found[value.__name__] = value
    return found


class _Region(nn.Layer):
    """The region's body: the case's call on its layer, counted."""

    calls = RunCount()  # forward runs, reruns included

    def __init__(self, layer: nn.Layer, call):
        super().__init__()
        self.layer = layer
        self.call = call

    def forward(self, *inputs):
        self.calls += 1
        if self.call is None:
            return self.layer(*inputs)
        return self.call(self.layer, *inputs)


def _loss(out) -> paddle.Tensor:
    """A scalar over every float output, each weighted by a fixed random cotangent (a plain
    sum would give softmax-like layers a zero gradient)."""
    rs = np.random.RandomState(1)
    terms = [(t * paddle.to_tensor(rs.standard_normal(t.shape).astype("float32"))).sum()
             for t in tensors_in(out) if t.is_floating_point()]
    return paddle.add_n(terms)


def _built(case: Case) -> tuple:
    """Seed, then the region (in train mode) and its inputs: the same for every run."""
    seed_all()
    region = _Region(case.build(), case.call)
    region.train()
    return region, case.inputs(Draw())


def _run(case: Case, options: dict | None) -> dict:
    """Call plainly (``options`` None) or recomputed, backward; every value to compare and
    the body's call count."""
    region, inputs = _built(case)
    out = region(*inputs) if options is None else recompute(region, *inputs, **options)
    loss = _loss(out)
    loss.backward()
    floats = [t for t in inputs if t.is_floating_point() and not t.stop_gradient]
    return {
        "calls": region.calls,
        "values": {
            "loss": loss.numpy(),
            **{f"output[{i}]": t.numpy() for i, t in enumerate(tensors_in(out))},
            **{f"input[{i}].grad": _grad(t) for i, t in enumerate(floats)},
            **{f"{n}.grad": _grad(p) for n, p in region.named_parameters()},
            **{f"{n} (after)": p.numpy() for n, p in region.named_parameters()},
            **{f"{n} (buffer, after)": b.numpy() for n, b in region.named_buffers() if b is not None},
        },
    }


_PLAIN: dict[str, dict] = {}


def _plain(name: str) -> dict:
    """The plain run of a case (computed once), with a census of what its forward saves
    for backward: the names of the saved tensors, and of the region's leaves."""
    if name not in _PLAIN:
        case = _CASES[name]
        plain = _run(case, None)
        region, inputs = _built(case)
        saved = []
        with paddle.autograd.saved_tensors_hooks(lambda t: saved.append(t.name) or t, lambda t: t):
            region(*inputs)
        plain["saved"] = set(saved)
        held = {p.name for p in region.parameters()} | {b.name for b in region.buffers()}
        plain["leaves"] = {t.name for t in inputs} | held
        plain["themselves"] = {t.name for t in inputs if not t.stop_gradient} | held
        _PLAIN[name] = plain
    return _PLAIN[name]


def _grad(t: paddle.Tensor):
    return None if t.grad is None else t.grad.numpy()


def _assert_same(values: dict, plain: dict, where: str) -> None:
    __tracebackhide__ = True
    assert values.keys() == plain.keys(), where
    for key, expected in plain.items():
        got = values[key]
        if expected is None or got is None:
            assert got is None and expected is None, f"{where}: {key} is {got!r}, plainly {expected!r}"
            continue
        np.testing.assert_array_equal(got, expected, err_msg=f"{where}: {key}")


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("name", list(_CASES))
def test_layer_in_a_region_is_exact(name: str, mode: str):
    plain = _plain(name)
    recomputed = _run(_CASES[name], MODES[mode])
    _assert_same(recomputed["values"], plain["values"], f"{name} ({mode})")
    assert plain["calls"] == 1
    reruns = _reruns(mode, plain)
    if reruns is not None:
        assert recomputed["calls"] == 1 + reruns, f"{name} ({mode}): body ran {recomputed['calls']} times"


def _reruns(mode: str, plain: dict) -> int | None:
    """Reentrant mode always reruns; a non-reentrant region only for a saved tensor that is
    not an input needing a gradient, a parameter or a buffer (those come back as themselves:
    NOTE [ Saved leaves ]); a policy region that keeps nothing only for a saved tensor it did
    not get as an input, parameter or buffer.  What a keeping policy reruns depends on the
    operators (None: not checked; the other three modes prove the rerun)."""
    if mode == "policy_keep":
        return None
    if mode == "reentrant":
        return 1
    if mode == "policy":
        return int(bool(plain["saved"] - plain["leaves"]))
    return int(bool(plain["saved"] - plain["themselves"]))


@pytest.mark.parametrize("name", list(_UNRUNNABLE))
def test_unrunnable_class_still_cannot_run_on_cpu(name: str):
    entry = _UNRUNNABLE[name]
    with pytest.raises(entry.raises, match=entry.match):
        entry.check()


def test_table_covers_every_paddle_nn_layer_class():
    classes = set(paddle_nn_layer_classes())
    missing = sorted(classes - LAYERS.keys())
    stale = sorted(LAYERS.keys() - classes)
    assert not missing, f"paddle.nn Layer classes with no case in tests/_nn_table.py: {missing}"
    assert not stale, f"tests/_nn_table.py cases for classes paddle.nn no longer exports: {stale}"


_LSTM_SCRIPT = textwrap.dedent("""
    import paddle
    from paddle_recompute import recompute
    paddle.seed(0)
    lstm = paddle.nn.LSTM(3, 4, num_layers=2, dropout=0.5)
    x = paddle.randn([2, 3, 3])
    x.stop_gradient = False
    out, _ = recompute(lstm, x, use_reentrant=True)
    out.sum().backward()
    assert lstm.weight_ih_l0.grad is not None and x.grad is not None
    print("ok")
""")


def test_two_layer_lstm_with_dropout_reentrant_runs():
    """Paddle's own reentrant recompute crashes the process on this model; ours must not
    (a subprocess, so a crash is a failed test, not a lost run)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", _LSTM_SCRIPT], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    assert done.stdout.strip().endswith("ok")
