"""Run a worker in two CPU processes (``paddle.distributed.spawn`` over gloo) and read back
what each rank saved.

A worker runs its scenarios in order on both ranks and saves each result as
``<scenario>-rank<r>--<key>.npy``; an exception goes to ``error-<scenario>-rank<r>.txt``
and stops the worker (the ranks would otherwise wait on each other's collectives).
"""

from __future__ import annotations

import glob
import os
import time
import traceback

import numpy as np
import pytest

TIMEOUT_S = 120


def run_scenarios(out_dir: str, scenarios) -> None:
    """Worker side: run ``(name, callable)`` pairs; save each returned dict of arrays."""
    import paddle.distributed as dist

    rank = dist.get_rank()
    for name, run in scenarios:
        try:
            result = run()
        except BaseException:
            with open(os.path.join(out_dir, f"error-{name}-rank{rank}.txt"), "w") as f:
                f.write(traceback.format_exc())
            raise
        for key, value in result.items():
            np.save(os.path.join(out_dir, f"{name}-rank{rank}--{key.replace('.', '_')}.npy"), value)
    with open(os.path.join(out_dir, f"done-rank{rank}"), "w") as f:
        f.write("ok")


def spawn(worker, out_dir: str) -> None:
    """Test side: run ``worker(out_dir)`` in two processes; fail with the workers' errors."""
    import paddle.distributed as dist

    try:
        context = dist.spawn(worker, args=(out_dir,), nprocs=2, backend="gloo", join=False)
    except Exception as exc:  # the sandbox forbids processes or local sockets
        pytest.skip(f"paddle.distributed.spawn(backend='gloo') cannot start here: {exc!r}")
    deadline = time.monotonic() + TIMEOUT_S
    failure = None
    try:
        while not context.join(timeout=1):
            if time.monotonic() > deadline:
                failure = f"the workers did not finish within {TIMEOUT_S} s"
                break
    except Exception as exc:  # a worker raised
        failure = repr(exc)
    finally:
        for process in context.processes:
            if process.is_alive():
                process.terminate()
    errors = sorted(glob.glob(os.path.join(out_dir, "error-*")))
    if errors:
        pytest.fail("worker errors:\n" + "\n".join(open(p).read() for p in errors))
    if failure is not None:
        pytest.fail(failure)


def load(out_dir: str, name: str, rank: int) -> dict:
    """What ``name`` saved on ``rank``, by key."""
    prefix = os.path.join(out_dir, f"{name}-rank{rank}--")
    files = sorted(glob.glob(prefix + "*.npy"))
    assert files, f"no results for {name} on rank {rank}"
    return {path[len(prefix):-4]: np.load(path) for path in files}
