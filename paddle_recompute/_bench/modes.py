"""The recompute modes the benchmark compares: no recompute, Paddle's built-in, ours, and
(opt-in, from ``modes_selective``) policies, presets and the planner.

Other modes plug in with one call each (see :func:`~.registry.register_mode`), e.g.::

    register_mode("ours policy=dots", runner=lambda block, x: recompute(
        block, x, use_reentrant=False, policy=...))
    register_mode("planner 50%", prepare=lambda model, inputs: runner_from_plan(...))
"""

from __future__ import annotations

from paddle.distributed.fleet.utils import recompute as builtin_recompute

from .._entry.recompute import recompute
from . import modes_selective
from .blocks import Runner, plain_runner
from .registry import BASELINE, BUILTIN, MODES, Mode, register_mode

__all__ = ["Mode", "MODES", "register_mode", "BASELINE", "BUILTIN"]


def _builtin(use_reentrant: bool) -> Runner:
    return lambda block, x: builtin_recompute(block, x, use_reentrant=use_reentrant)


def _ours(use_reentrant: bool) -> Runner:
    return lambda block, x: recompute(block, x, use_reentrant=use_reentrant)


register_mode(BASELINE, plain_runner, description="no recompute")
register_mode(BUILTIN, _builtin(True), exact=False,
              description="paddle.distributed.fleet.utils.recompute, use_reentrant=True")
register_mode("builtin non-reentrant", _builtin(False), exact=False,
              description="paddle.distributed.fleet.utils.recompute, use_reentrant=False")
register_mode("ours reentrant", _ours(True), description="paddle_recompute.recompute, use_reentrant=True")
register_mode("ours non-reentrant", _ours(False),
              description="paddle_recompute.recompute, use_reentrant=False")
modes_selective.register()
