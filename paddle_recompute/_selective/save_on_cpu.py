"""``save_on_cpu``: tensors saved for backward wait on the host (torch's ``save_on_cpu``).

A hook frame on the shared stack (``_core/hooks.py``), so it composes with recompute regions:
inside a region opened within the body the region owns its saved tensors; the region's own
outputs and anything saved outside regions go to the host.  Parameters are left where they
are (they stay alive anyway; copying them would only cost time).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from .._core import hooks as _hooks
from .._core.identity import keeps_identity
from .._core.offload import to_host, to_place

__all__ = ["save_on_cpu"]


class _OnHost:
    __slots__ = ("host", "place", "blocking")

    def __init__(self, tensor, blocking: bool):
        self.host, self.place = to_host(tensor, blocking)
        self.blocking = blocking

    def unpack(self):
        return to_place(self.host, self.place, self.blocking)


class _Same:
    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor

    def unpack(self):
        return self.tensor


class _HostFrame:
    __slots__ = ("blocking", "count")

    def __init__(self, blocking: bool):
        self.blocking = blocking
        self.count = 0

    def pack(self, tensor):
        if keeps_identity(tensor):  # NOTE [ Saved leaves ] in _core/identity.py
            return _Same(tensor)
        self.count += 1
        return _OnHost(tensor, self.blocking)


@contextlib.contextmanager
def save_on_cpu(non_blocking: bool = True) -> Iterator[None]:
    """Keep every tensor saved for backward in the body on the host until backward.

    On a GPU the copies go to pinned memory (asynchronous with ``non_blocking=True``) and
    come back when backward needs them; on CPU they are copies (exact, nothing saved).
    Composes with ``recompute(..., use_reentrant=False)`` regions and
    ``paddle_recompute.saved_tensors_hooks``.

    Args:
        non_blocking: copy asynchronously on the current CUDA stream (ignored on CPU).

    Raises:
        TypeError: ``non_blocking`` is not a bool.
        RecomputeError: a hook pair was registered in Paddle's core directly
            (``core.eager.register_saved_tensors_hooks``); ``paddle.autograd.saved_tensors_hooks``
            composes (NOTE [ Raw hooks ] in ``_core/raw_hooks.py``).

    Example:
        >>> import paddle, paddle_recompute as pr
        >>> lin = paddle.nn.Linear(4, 4)
        >>> x = paddle.randn([2, 4]); x.stop_gradient = False
        >>> with pr.save_on_cpu():
        ...     y = paddle.tanh(lin(x))
        >>> y.sum().backward()
    """
    if not isinstance(non_blocking, bool):
        raise TypeError(f"save_on_cpu: `non_blocking` must be True or False, got {non_blocking!r}")
    with _hooks.pushed(_HostFrame(not non_blocking)):
        yield
