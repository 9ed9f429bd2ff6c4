"""Keep chosen saved inputs on the host until backward (pinned memory on CUDA)."""

from __future__ import annotations

import paddle
from paddle.base import core

__all__ = ["to_host", "to_place"]


def to_host(t: paddle.Tensor) -> tuple[paddle.Tensor, object]:
    """Return a host copy of ``t`` (pinned when CUDA is available) and ``t``'s place."""
    place = t.place
    if place.is_cpu_place():
        host = t.clone()  # a separate buffer, so the caller's tensor can be freed
    elif core.is_compiled_with_cuda():
        host = t.pin_memory()
    else:
        host = t.cpu()
    host.stop_gradient = t.stop_gradient
    return host, place


def to_place(host: paddle.Tensor, place) -> paddle.Tensor:
    """Copy ``host`` back to ``place`` for recomputation (keeps ``stop_gradient``)."""
    if place.is_cpu_place() or host.place._equals(place):
        out = host
    else:
        out = host._copy_to(place, True)
    out.stop_gradient = host.stop_gradient
    return out
