"""Recompute under threads: every feature that installs hooks is exact while other threads
run autograd at the same time (NOTE [ Threads ] in ``_core/hooks.py``).

The workloads (``paddle_recompute/_bench/threads.py``, shared with
``benchmarks/stress_threads.py``) each train their own small model for a number of steps
and return their losses, gradients and final parameters.  Run alone, one after another,
they give the reference; run all at once in threads (with a tiny switch interval, so the
interpreter interleaves them inside regions, reruns and hooks), every number must be
equal, bit for bit.  Only one thread draws random numbers: Paddle's generators are
process-wide, so concurrent draws interleave in any program, with or without recompute.
"""

from __future__ import annotations

import sys
import threading

import numpy as np
import paddle
import pytest
from paddle import nn

import paddle_recompute as pr
from paddle_recompute import planner, policies
from paddle_recompute._bench import threads
from paddle_recompute._core import hooks as _hooks

DIM = threads.DIM


def _model(n=3, seed=0):
    paddle.seed(seed)
    return threads.blocks(n=n)


def _batch(seed):
    rng = np.random.RandomState(seed)
    x = paddle.to_tensor(rng.standard_normal((4, DIM)).astype("float32"))
    x.stop_gradient = False
    return x


def train(name: str, steps: int, seed: int) -> list:
    return threads.trainer(name, steps, seed)()


def trainer(name: str, steps: int, seed: int):
    return threads.trainer(name, steps, seed)


def run_concurrently(jobs: list) -> list:
    """Run ``jobs`` in threads started together; re-raise the first failure."""
    results, errors = threads.run_concurrently(jobs)
    if errors:
        i, exc = errors[0]
        raise AssertionError(f"job {i} failed in its thread: {type(exc).__name__}: {exc}") from exc
    # with one thread left, Paddle's slot can be handed back (NOTE [ Threads ])
    assert _hooks.release_idle()
    return results


def assert_same(name, expected, actual):
    assert len(expected) == len(actual), name
    for i, (a, b) in enumerate(zip(expected, actual, strict=True)):
        np.testing.assert_array_equal(a, b, err_msg=f"{name}: entry {i}")


@pytest.mark.parametrize("phase", list(threads.PHASES))
def test_mixed_modes_in_threads_equal_single_threaded_runs(phase):
    """mixed: ten threads, every hook-installing feature and the MindSpore layer, 30 steps
    each; dropout: one thread draws in regions of both modes while three do not draw."""
    steps = 30
    names = threads.PHASES[phase]
    reference = [train(name, steps, seed) for seed, name in enumerate(names)]
    concurrent = run_concurrently([trainer(name, steps, seed) for seed, name in enumerate(names)])
    for name, expected, actual in zip(names, reference, concurrent, strict=True):
        assert_same(name, expected, actual)
    assert not _hooks.installed() and not _hooks.active_frames()


def test_several_threads_with_regions_of_the_same_mode():
    """Four threads each with non-reentrant regions open at the same time."""
    steps = 30
    reference = [train("non-reentrant", steps, seed) for seed in range(4)]
    concurrent = run_concurrently([trainer("non-reentrant", steps, seed) for seed in range(4)])
    for seed in range(4):
        assert_same(f"thread {seed}", reference[seed], concurrent[seed])


def _bytes(prof) -> tuple:
    return prof.total_bytes, {name: row.saved_bytes for name, row in prof.layers.items()}


def test_profile_in_a_thread_while_another_thread_trains():
    model = nn.Sequential(*_model())
    x = _batch(7)
    alone = _bytes(planner.profile(model, x))
    profiled, _ = run_concurrently([lambda: _bytes(planner.profile(model, x)),
                                    trainer("plain", 30, 3)])
    assert profiled == alone


def test_a_thread_without_regions_is_not_captured():
    """While a region is open in one thread, another thread's saved tensors are its own:
    the region neither recomputes nor counts them."""
    inside, entered, release = [], threading.Event(), threading.Event()
    lin = nn.Linear(DIM, DIM)

    def region_body(h):
        inside.append(len(_hooks.active_frames()))
        entered.set()
        release.wait(120)
        return lin(h)

    plain = trainer("plain", 3, 5)

    def other():
        entered.wait(120)
        assert _hooks.installed() and _hooks.active_frames() == ()
        out = plain()
        release.set()
        return out

    x = _batch(1)
    results = run_concurrently([lambda: pr.recompute(region_body, x, use_reentrant=False).sum().backward(),
                                other])
    assert inside[0] == 1
    assert_same("plain", train("plain", 3, 5), results[1])


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_recompute_error_in_one_thread_leaves_the_other_exact(use_reentrant):
    calls = {"n": 0}
    lin = nn.Linear(DIM, DIM)

    def changes_on_rerun(h):
        calls["n"] += 1
        return lin(h if calls["n"] == 1 else h[:2])

    def failing():
        x = _batch(2) * 1  # not a leaf: a leaf would stay itself and need no rerun (NOTE [ Saved leaves ])
        with pytest.raises(pr.RecomputeError):
            pr.recompute(changes_on_rerun, x, use_reentrant=use_reentrant).sum().backward()
        return True

    results = run_concurrently([failing, trainer("reentrant", 20, 4)])
    assert results[0] is True
    assert_same("reentrant", train("reentrant", 20, 4), results[1])


def _policy_bytes(model, x) -> dict:
    prof = planner.profile(model, x)
    planner.plan(model, x, budget=0.6, profile=prof)
    # Only the policy options: which operator-level points (``ops:k``) a block is offered
    # depends on measured operator times, so their set varies from run to run by design.
    return {block: {kind: held for kind, (held, _) in costs.items() if kind.startswith("policy:")}
            for block, costs in prof.policy_costs.items()}


def test_planner_policy_measurements_ignore_another_threads_regions():
    """``plan`` measures its policy options by collecting the policy regions that end during
    its step: only this thread's, while another thread ends policy regions of another size
    as fast as it can."""
    model = nn.Sequential(*_model(seed=11))
    x = _batch(11)
    alone = _policy_bytes(model, x)
    assert alone and all(alone.values())
    other = nn.Linear(2 * DIM, 2 * DIM)
    y = paddle.randn([8, 2 * DIM])
    y.stop_gradient = False
    done = threading.Event()

    def measure():
        try:
            return [_policy_bytes(model, x) for _ in range(3)]
        finally:
            done.set()

    def noise():
        while not done.is_set():
            pr.recompute(other, y, use_reentrant=False, policy=policies.save_matmuls)

    measured, _ = run_concurrently([measure, noise])
    assert measured == [alone] * 3


def test_policy_frames_are_collected_by_their_own_thread_only():
    """The planner's measured regions (``_planner.policy_frame.measured_regions``) are this
    thread's policy regions, never another thread's."""
    from paddle_recompute._planner.options.policy_frame import measured_regions

    lin = nn.Linear(DIM, DIM)
    x = _batch(3)
    with measured_regions() as collected:
        run_concurrently([lambda: pr.recompute(lin, x, use_reentrant=False, policy=policies.save_matmuls)])
        assert collected == []
        pr.recompute(lin, x, use_reentrant=False, policy=policies.save_matmuls)
        assert len(collected) == 1


def test_a_raw_pair_in_one_thread_packs_that_threads_saves_only():
    """Thread A enters ``paddle.autograd.saved_tensors_hooks``; thread B opens a region while
    A's pair is active, and A exits its pair while B's region is still open.  A's pair packs
    A's saves only, B's region recomputes, and nothing ever resets Paddle's slot while the
    other thread runs (NOTE [ Raw hooks ])."""
    packed = []
    a_entered, b_opened, a_exited = threading.Event(), threading.Event(), threading.Event()
    lin = nn.Linear(DIM, DIM)

    def thread_a():
        x = _batch(5)
        with paddle.autograd.saved_tensors_hooks(lambda t: packed.append(1) or t, lambda t: t):
            a_entered.set()
            b_opened.wait(120)
            (lin(x) ** 2).sum().backward()
        a_exited.set()
        return len(packed)

    calls = []

    def region(h):
        calls.append(1)
        if len(calls) == 1:
            b_opened.set()
            a_exited.wait(120)
        return lin(h)

    def thread_b():
        a_entered.wait(120)
        # _batch(6) * 1: not a leaf, which would stay itself and need no rerun
        pr.recompute(region, _batch(6) * 1, use_reentrant=False).sum().backward()
        return True

    alone = []
    with paddle.autograd.saved_tensors_hooks(lambda t: alone.append(1) or t, lambda t: t):
        (lin(_batch(5)) ** 2).sum().backward()
    saved_by_a, _ = run_concurrently([thread_a, thread_b])
    assert saved_by_a == len(alone) > 0  # A's own saves only, none of B's
    assert len(calls) == 2  # B's region recomputed
    assert not _hooks.installed()
    with paddle.autograd.saved_tensors_hooks(lambda t: t, lambda t: t):
        (lin(_batch(7)) * 2).sum().backward()


class _RegionInAnotherThread:
    """A helper thread whose region stays open: the dispatching pair holds Paddle's slot
    while this thread, without frames, saves tensors."""

    def __enter__(self):
        self.opened, self.release = threading.Event(), threading.Event()

        def body(h):
            self.opened.set()
            self.release.wait(120)
            return h * 2

        self.thread = threading.Thread(target=lambda: pr.recompute(body, _batch(9), use_reentrant=False))
        self.thread.start()
        assert self.opened.wait(120)
        assert _hooks.installed() and not _hooks.active_frames()
        return self

    def __exit__(self, *exc):
        self.release.set()
        self.thread.join()


def _chain_peak(n=6) -> tuple:
    """Host bytes held after the forward and at the peak of backward of a chain of exps,
    each of which saves its 1 MiB output."""
    x = paddle.ones([512, 512])
    x.stop_gradient = False
    core = paddle.base.core
    before = core.host_memory_stat_current_value("Allocated", 0)
    y = x
    for _ in range(n):
        y = paddle.exp(y * 0.01)
    loss = y.sum()
    held = core.host_memory_stat_current_value("Allocated", 0) - before
    core.host_memory_stat_reset_peak_value("Allocated", 0)
    loss.backward()
    peak = core.host_memory_stat_peak_value("Allocated", 0) - before
    return held, peak, x.grad.numpy()


def test_a_thread_without_frames_saves_as_plain_paddle_while_the_pair_is_installed():
    """NOTE [ Plain saves ]: the same bytes held and freed during backward, Paddle's in-place
    error, ``retain_graph``, and PyLayer contexts that keep any object."""
    alone = _chain_peak()
    with _RegionInAnotherThread():
        shared = _chain_peak()
        x = _batch(1)
        y = x * 2
        z = y * y
        y.scale_(3.0)  # modifies a tensor z's node saved
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()
        w = x * 3
        v = w * w
        v.sum().backward(retain_graph=True)
        v.sum().backward()
        got_pylayer = _pylayer_with_objects()
    assert shared[:2] == alone[:2]  # buffers freed as each node runs, not when the graph dies
    np.testing.assert_array_equal(shared[2], alone[2])
    assert got_pylayer == _pylayer_with_objects() == (3, True, [2.0, 2.0])


def _pylayer_with_objects():
    class Scale(paddle.autograd.PyLayer):
        @staticmethod
        def forward(ctx, x, factor):
            ctx.save_for_backward(x, factor, [x])  # a non-tensor and a list: Paddle's hooks refuse them
            return x * factor

        @staticmethod
        def backward(ctx, grad):
            x, factor, extra = ctx.saved_tensor()
            seen.append((factor, extra[0] is x))
            return grad * factor

    seen = []
    x = paddle.ones([2])
    x.stop_gradient = False
    Scale.apply(x, 2).sum().backward()
    ((factor, same),) = seen
    return factor + 1, same, x.grad.numpy().tolist()


def test_the_pair_is_released_once_the_other_threads_have_ended():
    with _RegionInAnotherThread():
        pass
    assert _hooks.installed()  # the region ended while this thread was alive beside it
    paddle.exp(_batch(2)).sum().backward()  # the next plain save finds this thread alone
    assert not _hooks.installed()


def test_exit_with_the_pair_installed_does_not_hang(tmp_path):
    """Paddle's static slot would destroy the pair after Python is gone and wait for the GIL
    forever; the pair is removed at exit (a daemon thread keeps it installed until then)."""
    import subprocess

    script = tmp_path / "exit.py"
    script.write_text(
        "import threading, paddle, paddle_recompute as pr\n"
        "from paddle_recompute._core import hooks\n"
        "threading.Thread(target=threading.Event().wait, daemon=True).start()\n"
        "x = paddle.ones([2]); x.stop_gradient = False\n"
        "pr.recompute(lambda t: t * 2, x, use_reentrant=False).sum().backward()\n"
        "assert hooks.installed()\n"
        "print('done')\n"
    )
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and "done" in proc.stdout, proc.stderr[-2000:]
