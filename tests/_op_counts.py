"""Count real kernel executions of ``paddle._C_ops`` operators inside policy regions.

Policy regions call the operators through ``_ops._WRAPPED``; replacing a wrapper's kernel
with a counting one counts the executions that really happen (a skipped operator is
never executed), forward and recomputation alike.
"""

from __future__ import annotations

import collections
import contextlib

from paddle_recompute._core import ops as _ops


@contextlib.contextmanager
def counting_ops(*names: str):
    """Yield a Counter of executions of ``names`` (all operators when none given)."""
    counts: collections.Counter = collections.Counter()
    names = names or tuple(_ops.ORIGINALS)
    saved = {n: _ops._WRAPPED[n] for n in names}

    def counted(name):
        kernel = _ops.ORIGINALS[name]

        def run(*args, **kwargs):
            counts[name] += 1
            return kernel(*args, **kwargs)

        return run

    assert not _ops.is_installed()
    for n in names:
        _ops._WRAPPED[n] = _ops._wrap(n, counted(n))
    try:
        yield counts
    finally:
        _ops._WRAPPED.update(saved)
