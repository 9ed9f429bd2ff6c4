"""Per-operator time of the kernels code runs, policy regions and their reruns included.

Policy regions call what is in ``paddle._C_ops`` when they start (a function put there
stands in for Paddle's inside regions too), so timing wrappers put there see the kernels a
region's forward and rerun run; a rerun that rebuilds a dropout output from its kept mask
runs no dropout kernel, and the rebuild is timed apart.
"""

from __future__ import annotations

import collections
import contextlib
import threading
import time
from collections.abc import Iterator

from paddle import _C_ops

from .._core import ops
from .._core.errors import RecomputeError
from .._selective.dropout_replay import rebuilds_wrapped

__all__ = ["REBUILT", "kernel_times"]

REBUILT = "dropout(rebuilt)"


@contextlib.contextmanager
def kernel_times() -> Iterator[dict]:
    """Time every ``paddle._C_ops`` kernel called in the body, by operator name.

    Yields a dict, filled as the body runs: operator name -> ``[calls, seconds]`` (wall
    clock), kernels called by any thread, inside regions, in their reruns and outside them
    alike; dropout outputs that reruns rebuild from kept masks count under
    ``"dropout(rebuilt)"``.  A kernel called inside a timed one is part of its time, not
    counted apart; the kernel at which a rerun stops early (NOTE [ Early stop ]) is not
    counted.  Clear the dict to start over (e.g. after a forward, to keep a backward's
    reruns).  ``paddle._C_ops`` is put back on exit, also after an error.

    Raises:
        RecomputeError: entered inside a policy region (the region's operators would not
            see the timers).

    Example:
        >>> import paddle
        >>> from paddle_recompute import bench
        >>> with bench.kernel_times() as spent:
        ...     y = paddle.nn.functional.gelu(paddle.ones([2]))
        >>> spent["gelu"][0]
        1
    """
    if ops.is_installed():
        raise RecomputeError(
            "bench.kernel_times: entered inside a policy region, whose operators call the "
            "kernels the region found when it started; enter it outside the regions to time")
    spent: dict = collections.defaultdict(lambda: [0, 0.0])
    inside = threading.local()

    def timed(name, kernel):
        def run(*args, **kwargs):
            if getattr(inside, "on", False):
                return kernel(*args, **kwargs)
            inside.on = True
            try:
                start = time.perf_counter()
                out = kernel(*args, **kwargs)
                entry = spent[name]
                entry[0] += 1
                entry[1] += time.perf_counter() - start
                return out
            finally:
                inside.on = False

        run.__name__ = run.__qualname__ = getattr(kernel, "__name__", name)
        return run

    current = {name: fn for name, fn in vars(_C_ops).items() if name in ops.ORIGINALS}
    try:
        vars(_C_ops).update({name: timed(name, fn) for name, fn in current.items()})
        with rebuilds_wrapped(lambda rebuild: timed(REBUILT, rebuild)):
            yield spent
    finally:
        vars(_C_ops).update(current)
