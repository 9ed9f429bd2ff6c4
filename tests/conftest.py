"""Shared fixtures: CPU, fixed seeds, and a check that no test leaks global state.

``FLAGS_enable_host_memory_stat`` is read once, when Paddle is imported, so it is set
here, before anything imports Paddle (test_mechanism.py measures held host bytes).
"""

import gc
import itertools
import os

os.environ.setdefault("FLAGS_enable_host_memory_stat", "1")

import paddle  # noqa: E402
import pytest  # noqa: E402
from _rc_helpers import seed_all  # noqa: E402
from paddle.base import core, framework  # noqa: E402

paddle.set_device("cpu")


@pytest.fixture(autouse=True)
def _cpu_and_seeds():
    paddle.set_device("cpu")
    seed_all()
    yield


_TESTS_RUN = itertools.count()


@pytest.fixture(autouse=True)
def _collector_between_tests():
    """The cyclic garbage collector runs between tests, never inside one.

    Paddle's layers hold reference cycles, so an earlier test's model is freed only at a
    collection; one that fires inside a measured forward frees those bytes there and reads as
    negative (or too few) held bytes (seen: -1216 bytes in test_plan). A full collection
    costs ~90 ms with the suite's models alive, so it runs before every 20th test; in between,
    memory a test leaves in cycles waits for the next one.
    """
    if next(_TESTS_RUN) % 20 == 0:
        gc.collect()
    was = gc.isenabled()
    gc.disable()
    yield
    if was:
        gc.enable()


@pytest.fixture(params=[True, False], ids=["reentrant", "non_reentrant"])
def use_reentrant(request) -> bool:
    """Both recompute mechanisms."""
    return request.param


@pytest.fixture(autouse=True)
def _no_leaked_global_state(request):
    """After each test: grad on, autocast off, no saved-tensor hooks of ours left."""
    yield
    if "mindspore" in request.node.path.parts:
        return
    from paddle_recompute._core import hooks as _hooks

    leaks = []
    if not paddle.is_grad_enabled():
        paddle.set_grad_enabled(True)
        leaks.append("grad mode left disabled")
    tracer = framework._dygraph_tracer()
    if tracer._amp_level != core.AmpLevel.O0:
        tracer._amp_level = core.AmpLevel.O0
        leaks.append("autocast left on")
    if _hooks.active_frames():
        leaks.append(f"hook frames left on the stack: {_hooks.active_frames()}")
        _hooks.forget_all()
    if not _hooks.release_idle():  # no frame left: the pair must be removable (NOTE [ Threads ])
        leaks.append("the dispatching hook pair is still installed with no frame left")
        _hooks.forget_all()
    assert not leaks, "; ".join(leaks)


@pytest.fixture
def never_left_patched():
    """After the test: fail if it left Paddle patched (and unpatch it)."""
    yield
    from paddle_recompute import is_patched, unpatch_paddle

    leaked = is_patched()
    unpatch_paddle()
    assert not leaked, "a test left Paddle patched"
