"""Fixtures of the MindSpore compatibility tests (helpers live in _ms_helpers.py).

Host memory statistics must be on before Paddle is imported (the root conftest sets the
flag; it is set here too for runs that start in this directory).
"""

from __future__ import annotations

import gc
import os
import sys

os.environ.setdefault("FLAGS_enable_host_memory_stat", "1")

import paddle  # noqa: E402
import pytest  # noqa: E402
from _ms_helpers import held_bytes  # noqa: E402


@pytest.fixture
def memory_stats():
    """Fail clearly if Paddle's host memory statistics are off. Earlier tests' cyclic garbage
    (an error's traceback holding tensors, say) is collected first, so that the collector
    does not free it in the middle of a measurement."""
    gc.collect()
    before = held_bytes()
    probe = paddle.ones([4096])
    if held_bytes() - before < 4096:
        pytest.fail("FLAGS_enable_host_memory_stat was not set before paddle was imported")
    del probe
    return held_bytes


@pytest.fixture
def alias():
    """``import mindspore`` (and code that does it, such as ``import mindcv``) gets the layer."""
    from paddle_mindspore import install_import_alias, uninstall_import_alias

    install_import_alias()
    try:
        yield
    finally:
        uninstall_import_alias()


@pytest.fixture
def compat_path():
    """compat/ on ``sys.path``: its scripts import as modules (zoo, zoo_case, saved_on_disk)."""
    from _ms_helpers import COMPAT

    sys.path.insert(0, str(COMPAT))
    try:
        yield
    finally:
        sys.path.remove(str(COMPAT))


@pytest.fixture
def zoo(alias, compat_path):
    """compat/zoo.py as a module (it imports mindcv and zoo_case under the alias)."""
    import zoo as module

    return module


@pytest.fixture(autouse=True)
def _clean_state():
    """Each test starts and ends with grad on, no hook frames, no import alias, plain Paddle Layers."""
    from paddle_mindspore import (
        _recipes,
        layer_recompute_installed,
        uninstall_import_alias,
        uninstall_layer_recompute,
    )
    from paddle_recompute._core import hooks as _hooks

    yield
    leaks = []
    if not paddle.is_grad_enabled():
        paddle.set_grad_enabled(True)
        leaks.append("grad mode left disabled")
    if _hooks.active_frames():
        leaks.append(f"hook frames left: {_hooks.active_frames()}")
        _hooks.forget_all()
    if _recipes._LOCAL.active:
        _recipes._LOCAL.active = False
        leaks.append("recipe scope left active")
    if layer_recompute_installed():
        uninstall_layer_recompute()
        leaks.append("paddle.nn.Layer.recompute left installed")
    if "mindspore" in sys.modules:
        uninstall_import_alias()
    assert not leaks, "; ".join(leaks)
