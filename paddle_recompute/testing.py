"""Helpers to check that recomputation changes nothing but memory.

Three layers, each built on the one before:

* :func:`assert_tensors_equal` compares tensors (or nested sequences / dicts of them)
  and reports mismatches the way ``numpy.testing`` does, naming the entry that differs.
* :func:`snapshot_grads` / :func:`snapshot_params` / :func:`snapshot_buffers` copy a
  model's gradients, parameters or buffers into ``{name: numpy array}`` dicts, so they can
  be compared later.
* :func:`assert_loss_parity` trains the same seeded model twice, without and with
  recompute, and asserts that every loss, every gradient of every step, the final
  parameters (BatchNorm statistics included) and buffers agree (exactly, by default).

:func:`recompute_sublayers` is a ready-made ``recompute_plan`` for
:func:`assert_loss_parity`: it routes chosen sublayers through :func:`~paddle_recompute.recompute`.
"""

from ._interop.compare import assert_tensors_equal
from ._interop.parity import (
    assert_loss_parity,
    recompute_sublayers,
    snapshot_buffers,
    snapshot_grads,
    snapshot_params,
)

__all__ = [
    "assert_loss_parity",
    "assert_tensors_equal",
    "recompute_sublayers",
    "snapshot_buffers",
    "snapshot_grads",
    "snapshot_params",
]
