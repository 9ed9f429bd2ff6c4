"""Keep tensors on the host until backward (pinned memory and asynchronous copies on CUDA).

NOTE [ Strided copies ]: a copy of a saved tensor must keep its layout.  Paddle 3.3's
backward applies the strides and offset a saved view had when saved to whatever the
unpack hook returns: handed a contiguous copy of ``k.transpose(...)`` (saved by
``q @ k.transpose(...)``, as in every attention) it computes a wrong gradient for ``q``,
and handed a copy of a row of an index tensor (``for e in idx``: offset 8 bytes) it fails
"The size of Holder is not enough" (tests/core/test_offload.py).  So a view (non-contiguous, or
at an offset) is copied as its whole buffer, and the copy is viewed with the original
shape, strides and offset (``paddle.as_strided``) on each side.
"""

from __future__ import annotations

import paddle
from paddle.base import core

from . import ops

__all__ = ["to_host", "to_place", "path_marker", "Stash", "HostCopy"]

_CUDA = core.is_compiled_with_cuda()


def to_host(t: paddle.Tensor, blocking: bool = True) -> tuple[paddle.Tensor, object]:
    """Return a host copy of ``t`` (pinned when CUDA is available) and ``t``'s place.

    ``blocking=False`` lets a device-to-pinned copy run asynchronously on the current
    stream: later kernels on that stream (and the copy back in ``to_place``) are ordered
    after it, and the device buffer is only reused by work queued after the copy.
    A view keeps its layout (NOTE [ Strided copies ]).
    """
    place = t.place
    flag = t.stop_gradient
    t = t.detach()  # a copy made with autograd would reach back into the graph: NOTE [ No cycles ]
    if place.is_cpu_place():
        host = _copied(t, lambda b: b.clone())  # a separate buffer, so the caller's can be freed
    elif _CUDA and place.is_gpu_place():
        host = _copied(t, lambda b: b.pin_memory() if blocking
                       else b._copy_to(paddle.CUDAPinnedPlace(), False))
    else:
        host = _copied(t, lambda b: b.cpu())
    host.stop_gradient = flag
    return host, place


def to_place(host: paddle.Tensor, place, blocking: bool = True) -> paddle.Tensor:
    """Copy ``host`` back to ``place`` for recomputation (keeps ``stop_gradient`` and layout)."""
    if place.is_cpu_place() or host.place._equals(place):
        out = host
    else:
        out = _copied(host, lambda b: b._copy_to(place, blocking))
    out.stop_gradient = host.stop_gradient
    return out


def _copied(t: paddle.Tensor, copy) -> paddle.Tensor:
    """``copy(t)``, or for a view ``t`` its buffer copied and viewed as ``t``."""
    if not t._is_initialized() or (t.is_contiguous() and t._offset() == 0):
        return copy(t)
    with ops.unobserved(), paddle.no_grad():  # our copies are no operator of the region
        whole = paddle.as_strided(t, [t._holder_size() // t.element_size()], [1], 0)
        return paddle.as_strided(copy(whole), t.shape, t.get_strides(), t._offset())


def path_marker(t: paddle.Tensor) -> paddle.Tensor | None:
    """A zero-element tensor whose grad node leads to ``t``'s; None when ``t`` is a leaf or
    needs no gradient.  See NOTE [ Stashed inputs ] in ``reentrant.py``: reading
    ``t.grad_fn`` now would leak the graph whenever no backward follows (Paddle 3.3)."""
    if t.stop_gradient or t.is_leaf:
        return None
    # index_select's grad node keeps only its input's shape (slicing or summing would keep
    # the memory or read every element).
    none = paddle.zeros([0], dtype="int64")
    return paddle.index_select(t if t.ndim else t.reshape([1]), none, axis=0)


class Stash:
    """Base of what a reentrant region keeps in place of an input (NOTE [ Stashed inputs ]).

    Subclasses set ``marker`` (``path_marker(t)``) and define ``restore()``, which gives
    back a tensor equal to the input in value, shape, dtype, place and ``stop_gradient``.
    """

    __slots__ = ("marker",)

    @property
    def grad_fn(self):
        """The input's path into the graph (read only under ``paddle.grad``), or None."""
        return None if self.marker is None else self.marker.grad_fn


class HostCopy(Stash):
    """An input kept on the host until backward.  Build one with ``HostCopy.of(t)``, or
    from ``to_host(t)``'s result."""

    __slots__ = ("host", "place")

    def __init__(self, host: paddle.Tensor, place, marker):
        self.host, self.place, self.marker = host, place, marker

    @classmethod
    def of(cls, t: paddle.Tensor) -> HostCopy:
        return cls(*to_host(t), path_marker(t))

    def restore(self) -> paddle.Tensor:
        return to_place(self.host, self.place)

    @property
    def nbytes(self) -> int:
        """Bytes this stash holds."""
        return self.host._numel() * self.host.element_size()
