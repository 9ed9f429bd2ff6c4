"""Keep tensors on the host until backward (pinned memory and asynchronous copies on CUDA)."""

from __future__ import annotations

import paddle
from paddle.base import core

__all__ = ["to_host", "to_place"]

_CUDA = core.is_compiled_with_cuda()


def to_host(t: paddle.Tensor, blocking: bool = True) -> tuple[paddle.Tensor, object]:
    """Return a host copy of ``t`` (pinned when CUDA is available) and ``t``'s place.

    ``blocking=False`` lets a device-to-pinned copy run asynchronously on the current
    stream: later kernels on that stream (and the copy back in ``to_place``) are ordered
    after it, and the device buffer is only reused by work queued after the copy.
    """
    place = t.place
    flag = t.stop_gradient
    t = t.detach()  # a copy made with autograd would reach back into the graph: NOTE [ No cycles ]
    if place.is_cpu_place():
        host = t.clone()  # a separate buffer, so the caller's tensor can be freed
    elif _CUDA and place.is_gpu_place():
        host = t.pin_memory() if blocking else t._copy_to(paddle.CUDAPinnedPlace(), False)
    else:
        host = t.cpu()
    host.stop_gradient = flag
    return host, place


def to_place(host: paddle.Tensor, place, blocking: bool = True) -> paddle.Tensor:
    """Copy ``host`` back to ``place`` for recomputation (keeps ``stop_gradient``)."""
    if place.is_cpu_place() or host.place._equals(place):
        out = host
    else:
        out = host._copy_to(place, blocking)
    out.stop_gradient = host.stop_gradient
    return out
