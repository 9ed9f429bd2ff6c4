"""Run a worker in two CPU processes (``paddle.distributed.spawn`` over gloo) and read back
what each rank saved.

A worker runs its scenarios in order on both ranks and saves each result as
``<scenario>-rank<r>--<key>.npy``; an exception goes to ``error-<scenario>-rank<r>.txt``
and stops the worker (the ranks would otherwise wait on each other's collectives), unless
the scenario is one that is meant to fail.
"""

from __future__ import annotations

import glob
import os
import time
import traceback

import numpy as np
import pytest

# Two fresh processes import Paddle and train small models: seconds alone, minutes on a
# loaded 2-core machine.  A worker that is still running at the deadline is a failure,
# never a skip.
TIMEOUT_S = 600
_TIMED_OUT = "the workers did not finish within"


def run_scenarios(out_dir: str, scenarios, *, may_fail=(), keep=None) -> None:
    """Worker side: run ``(name, callable)`` pairs; save each returned dict of arrays
    (where ``keep(name)``, if given, says so).  Scenarios named in ``may_fail`` must fail
    alike on every rank."""
    import paddle.distributed as dist

    rank = dist.get_rank()
    for name, run in scenarios:
        try:
            result = run()
        except BaseException:
            with open(os.path.join(out_dir, f"error-{name}-rank{rank}.txt"), "w") as f:
                f.write(traceback.format_exc())
            if name not in may_fail:
                raise
            continue
        if keep is None or keep(name):
            for key, value in result.items():
                np.save(os.path.join(out_dir, f"{name}-rank{rank}--{key.replace('.', '_')}.npy"), value)
        dist.barrier()
    with open(os.path.join(out_dir, f"done-rank{rank}"), "w") as f:
        f.write("ok")


def spawn(worker, out_dir: str, *, expected_errors=(), skip_if_nothing_ran=False) -> None:
    """Test side: run ``worker(out_dir)`` in two processes; fail with the workers' errors
    (except those of scenarios named in ``expected_errors``).  ``skip_if_nothing_ran``:
    skip instead when the workers failed before saving anything (no gloo here)."""
    import paddle.distributed as dist

    try:
        context = dist.spawn(worker, args=(out_dir,), nprocs=2, backend="gloo", join=False)
    except Exception as exc:  # the sandbox forbids processes or local sockets
        pytest.skip(f"paddle.distributed.spawn(backend='gloo') cannot start here: {exc!r}")
    failure = _join(context)
    errors = [path for path in sorted(glob.glob(os.path.join(out_dir, "error-*")))
              if not any(f"error-{name}-rank" in path for name in expected_errors)]
    if errors:
        pytest.fail("worker errors:\n" + "\n".join(open(p).read() for p in errors))
    if failure is not None:
        ran = glob.glob(os.path.join(out_dir, "done-*")) or glob.glob(os.path.join(out_dir, "*.npy"))
        if skip_if_nothing_ran and not ran and not failure.startswith(_TIMED_OUT):
            pytest.skip(f"gloo workers could not run here: {failure}")
        pytest.fail(failure)


def _join(context) -> str | None:
    deadline = time.monotonic() + TIMEOUT_S
    try:
        while not context.join(timeout=1):
            if time.monotonic() > deadline:
                return f"{_TIMED_OUT} {TIMEOUT_S} s"
    except Exception as exc:  # a worker raised
        return repr(exc)
    finally:
        for process in context.processes:
            if process.is_alive():
                process.terminate()
    return None


def load(out_dir: str, name: str, rank: int) -> dict:
    """What ``name`` saved on ``rank``, by key."""
    prefix = os.path.join(out_dir, f"{name}-rank{rank}--")
    files = sorted(glob.glob(prefix + "*.npy"))
    assert files, f"no results for {name} on rank {rank}"
    return {path[len(prefix):-4]: np.load(path) for path in files}
