"""Keep tensors on the host until backward (pinned memory and asynchronous copies on CUDA)."""

from __future__ import annotations

import paddle
from paddle.base import core

__all__ = ["to_host", "to_place", "HostCopy"]

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


class HostCopy:
    """A reentrant region's input kept on the host until backward.

    One kind of stash (NOTE [ Stashed inputs ] in ``reentrant.py``): ``restore()`` gives back
    a tensor equal to the input in value, shape, dtype, place and ``stop_gradient``;
    ``grad_fn`` is the input's, so an outer ``paddle.grad`` can still tell whether the input
    lies on its path.  Build one with ``HostCopy.of(t)``, or from ``to_host(t)``'s result.
    """

    __slots__ = ("host", "place", "grad_fn")

    def __init__(self, host: paddle.Tensor, place, grad_fn):
        self.host, self.place, self.grad_fn = host, place, grad_fn

    @classmethod
    def of(cls, t: paddle.Tensor) -> HostCopy:
        return cls(*to_host(t), t.grad_fn)

    def restore(self) -> paddle.Tensor:
        return to_place(self.host, self.place)

    @property
    def nbytes(self) -> int:
        """Bytes this stash holds."""
        return self.host._numel() * self.host.element_size()
