"""The backward's working memory of one micro-batch, read from the allocator.

NOTE [ Backward working memory ]: a plan bounds what a forward leaves held for the
backward.  The backward then allocates on top of that: the gradient arriving at the
stage's output, the gradients of activations between operators, each parameter's fresh
gradient before it is added into ``.grad`` (as large as the parameter: a 64x256 weight
makes a 65,536-byte temporary), and, in a recomputed region, the rerun's activations
while the region's backward runs.  None of it is saved by the forward, so the saved-tensor
hooks that count a plan's bytes never see it; the allocator does.  ``measure_working``
runs one forward and backward of the call (state put back, as a replay does) and returns
what the forward left allocated (its saved tensors and outputs: what a micro-batch in
flight holds beyond its inputs) and the allocator's peak over forward and backward beyond
that.  The first backward of a parameter moves its fresh gradient into ``.grad`` without a
copy, so when a parameter has none yet an unmeasured forward and backward runs first: the
measured one is a training step's.  ``.grad`` is put back afterwards (cleared where there
was none).

On the CPU the counter is Paddle's host allocator statistic, probed with a 1 MiB
allocation: where it does not move (the environment variable
``FLAGS_enable_host_memory_stat=1``, read when Paddle is imported, turns it on where a build
leaves it off) the error names that fix and ``working_bytes=``.  On a GPU it is the device
allocator's.
"""

from __future__ import annotations

import gc

import paddle
from paddle.base import core

from ..._core import tree
from ..._core.errors import RecomputeError
from ..._core.state import ForwardState
from ..harness import sync

__all__ = ["measure_working"]

_PROBE = 1 << 20


def measure_working(api: str, call: tuple, roots: tuple, params: list) -> tuple[int, int]:
    """``(held, working)``: bytes the forward of ``call`` left allocated, and bytes the
    allocator peaked at beyond those during its forward and backward (NOTE [ Backward
    working memory ]).

    Raises:
        RecomputeError: the allocator keeps no statistics in this process.
    """
    memory = _memory(api)
    with paddle.no_grad():
        saved = {id(p): (p, None if p.grad is None else p.grad.clone()) for p in params}
    was = gc.isenabled()
    gc.disable()  # a collection inside would free unrelated memory and read as less
    try:
        if any(p.grad is None for p in params):
            _step(api, call, roots, memory)  # gives every parameter its ``.grad``
        return _step(api, call, roots, memory)
    finally:
        if was:
            gc.enable()
        _put_back(saved.values())


def _step(api: str, call: tuple, roots: tuple, memory) -> tuple[int, int]:
    fn, args, kwargs = call
    with ForwardState(True, roots).replayed(api):
        sync()
        start = memory.current()
        memory.reset_peak()
        outs = [t for t in tree.flatten(fn(*args, **kwargs))[0]
                if not t.stop_gradient and t.is_floating_point()]
        sync()
        held = memory.current()
        if outs:  # a stage that takes no gradient has no backward
            paddle.autograd.backward(outs, [paddle.ones_like(t) for t in outs])
        sync()
        return held - start, max(0, memory.peak() - held)


def _put_back(saved) -> None:
    with paddle.no_grad():
        for p, grad in saved:
            if grad is None:
                p.clear_gradient(False)
            else:
                paddle.assign(grad, p.grad)


class _Host:
    def current(self) -> int:
        return core.host_memory_stat_current_value("Allocated", 0)

    def reset_peak(self) -> None:
        core.host_memory_stat_reset_peak_value("Allocated", 0)

    def peak(self) -> int:
        return core.host_memory_stat_peak_value("Allocated", 0)


class _Device:
    def current(self) -> int:
        return paddle.device.cuda.memory_allocated()

    def reset_peak(self) -> None:
        paddle.device.cuda.reset_max_memory_allocated()

    def peak(self) -> int:
        return paddle.device.cuda.max_memory_allocated()


def _memory(api: str):
    if paddle.get_device().startswith("gpu"):
        return _Device()
    host = _Host()
    before = host.current()
    probe = paddle.empty([_PROBE // 4], dtype="float32")
    moved = host.current() - before >= _PROBE
    del probe
    if not moved:
        raise RecomputeError(
            f"{api}: the host allocator keeps no statistics in this process, so the "
            f"backward's working memory cannot be measured; set "
            f"FLAGS_enable_host_memory_stat=1 in the environment before Paddle is imported, "
            f"or pass `working_bytes=` (bytes the backward allocates beyond what the "
            f"forward holds)")
    return host
