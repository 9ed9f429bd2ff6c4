"""The planner's measuring harness: its clock, one timed training step, and the measurement
session every measurement of a plan shares.

NOTE [ Planning clock ]: the planner's step and block times (the profile's forwards and
reruns, the measured region options, calibration, the final choice) are read from
:func:`clock`: on the CPU this process's CPU time (``time.process_time``: every thread's,
kernels included), not the wall clock; on a shared machine the wall clock is mostly waiting
for other processes (a 2-core host at load 8: ten 1024x1024 matmuls took 8.6-10.2 s of wall
clock and 0.48-0.51 s of CPU time).  On an accelerator, where the host waits for the
device, it is the wall clock (after ``sync``).  Per-operator times (``options/op_profile.py``)
stay on the wall clock: reading the CPU time is a system call, slow next to small kernels;
their prices are converted to the planner's clock (NOTE [ Operator clock ] there).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import paddle

from .._core import tree
from .._core.state import ForwardState

__all__ = ["Session", "clock", "step", "sync", "trainable_params"]


def sync() -> None:
    """Wait for the device (nothing to wait for on the CPU)."""
    if paddle.get_device() != "cpu":
        paddle.device.synchronize()


def clock() -> float:
    """Seconds by the planner's clock: CPU time on the CPU, else the wall clock (NOTE [
    Planning clock ])."""
    return time.process_time() if paddle.get_device() == "cpu" else time.perf_counter()


def trainable_params(table: dict) -> list:
    """The parameters of the layers in ``table`` that take gradients, each once."""
    return list({id(p): p for layer in table.values() for p in layer.parameters()
                 if not p.stop_gradient}.values())


def step(call, roots, params) -> float:
    """Seconds one forward + ``paddle.grad`` backward of ``call`` took by the planner's
    clock (state put back, ``.grad`` untouched)."""
    fn, args, kwargs = call
    with ForwardState(True, roots).replayed():
        sync()
        start = clock()
        outs = [t for t in tree.flatten(fn(*args, **kwargs))[0]
                if not t.stop_gradient and t.is_floating_point()]
        paddle.grad(outs, params, grad_outputs=[paddle.ones_like(t) for t in outs],
                    allow_unused=True)
        sync()
        return clock() - start


@dataclass(eq=False)
class Session:
    """What one plan measures on: the call, its layers, their roots, and the profile the
    measurements are stored in.

    Attributes:
        call: ``(fn, args, kwargs)``, the step the plan is for.
        table: layer name -> layer (``profile/blocks.py``'s ``layer_table``).
        roots: the layers whose state a replayed step puts back (``_core.layers.find_roots``).
        prof: the :class:`~paddle_recompute.planner.Profile` the measured costs go into.
    """

    call: tuple
    table: dict
    roots: tuple
    prof: object
    params: list = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.params = trainable_params(self.table)

    def step(self) -> float:
        """One timed forward + backward of the call (see :func:`step`)."""
        return step(self.call, self.roots, self.params)
