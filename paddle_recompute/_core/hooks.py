"""One process-wide pair of saved-tensor hooks, shared by a stack of frames.

Paddle allows a single ``saved_tensors_hooks`` pair at a time, so regions cannot each
install their own.  Instead the first active frame installs one dispatching pair and every
frame (recompute regions, recomputations, offload, user hooks registered through
:func:`saved_tensors_hooks`) pushes itself on a stack; the innermost frame packs.

Invariant: the object a frame's ``pack`` returns has an ``unpack()`` method, and
``obj.unpack()`` equals the packed tensor in value, shape, dtype and place.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from paddle.base import core

from .amp import set_grad_enabled
from .errors import RecomputeError

__all__ = ["pushed", "push", "pop", "saved_tensors_hooks", "active_frames", "UserFrame", "Kept"]

_STACK: list = []
_ADOPTED: list = []  # raw Paddle pairs at the bottom of _STACK, see NOTE [ Raw hooks ]
RAW_ACTIVE: list = []  # raw pairs in Paddle's slot, entered through Paddle's class; innermost last


def _pack(tensor):
    try:
        return _STACK[-1].pack(tensor)
    except BaseException:
        _regrad()
        raise


def _unpack(packed):
    try:
        return packed.unpack()
    except BaseException:
        _regrad()
        raise


def _regrad() -> None:
    """Undo Paddle's grad-mode leak when a hook raises.

    Paddle's Pack/UnPackHook switch grad mode off around the Python call and skip switching
    it back when the call raises, so an error inside a region would leave the whole program
    with grad disabled.  Pack hooks only run while grad is on, and backward is run from
    grad-enabled code, so grad mode goes back on.
    """
    set_grad_enabled(True)


def active_frames() -> tuple:
    return tuple(_STACK)


def _install() -> None:
    raw = RAW_ACTIVE[-1] if RAW_ACTIVE else None
    if raw is not None:  # see NOTE [ Raw hooks ]
        core.eager.reset_saved_tensors_hooks()
        _ADOPTED.append(raw)
        _STACK.append(UserFrame(raw.pack_hook, raw.unpack_hook))
        core.eager.register_saved_tensors_hooks(_pack, _unpack)  # the slot is free now
        return
    try:
        core.eager.register_saved_tensors_hooks(_pack, _unpack)
    except ValueError as exc:
        raise RecomputeError(
            "recompute(use_reentrant=False): a saved-tensor hook pair registered directly in "
            "Paddle's core (core.eager.register_saved_tensors_hooks) is active, and Paddle "
            "allows only one pair at a time. Register your hooks with "
            "paddle_recompute.saved_tensors_hooks(pack, unpack) or enter "
            "paddle.autograd.saved_tensors_hooks instead: those compose with recompute regions."
        ) from exc


def _uninstall() -> None:
    """Give Paddle's slot back: to nothing, or to the raw pair a region adopted."""
    core.eager.reset_saved_tensors_hooks()
    _STACK.clear()
    if _ADOPTED:
        raw = _ADOPTED.pop()
        core.eager.register_saved_tensors_hooks(raw.pack_hook, raw.unpack_hook)


def push(frame) -> None:
    """Make ``frame`` the innermost packer (installs the dispatching pair if needed)."""
    if not _STACK:
        _install()
    _STACK.append(frame)


def pop(frame) -> None:
    """Undo :func:`push` of ``frame`` (the innermost frame)."""
    if not _STACK or _STACK[-1] is not frame:
        raise RecomputeError(
            "saved-tensor hooks were exited out of order: each must be exited inside the "
            "region or hook context it was entered in"
        )
    _STACK.pop()
    if len(_STACK) == len(_ADOPTED):
        _uninstall()


class pushed:
    """Context manager: make ``frame`` the innermost packer for the body."""

    __slots__ = ("frame",)

    def __init__(self, frame):
        self.frame = frame

    def __enter__(self) -> None:
        push(self.frame)

    def __exit__(self, *exc: object) -> None:
        pop(self.frame)


class Kept:
    """A packed tensor kept as it is (a frame that saves instead of recomputing).

    NOTE [ No cycles ]: what a pack hook returns is owned by the grad node that saved the
    tensor.  Holding the tensor itself would hold its autograd meta, and through it its
    own grad node: for an output its operator saves (softmax, exp, a kept matmul output),
    that node is the saver, a cycle through C++ that Python's collector cannot see, and
    the node with every tensor it saved would leak each step.  So handles hold detached
    views (same buffer, no autograd meta).
    """

    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor.detach()

    def unpack(self):
        return self.tensor


class _UserPacked:
    __slots__ = ("value", "unpack_hook")

    def __init__(self, value, unpack_hook):
        self.value = value
        self.unpack_hook = unpack_hook

    def unpack(self):
        return self.unpack_hook(self.value)


class UserFrame:
    __slots__ = ("pack_hook", "unpack_hook")

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def pack(self, tensor):
        return _UserPacked(self.pack_hook(tensor), self.unpack_hook)


@contextlib.contextmanager
def saved_tensors_hooks(
    pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]
) -> Iterator[None]:
    """Like ``paddle.autograd.saved_tensors_hooks``, but nestable with recompute regions.

    Tensors saved inside the body go through ``pack_hook``; inside a recompute region opened
    within the body, the region owns its saved tensors (they are recomputed, not packed).

    Raises:
        TypeError: a hook is not callable.
        RecomputeError: a hook pair was registered in Paddle's core directly
            (``core.eager.register_saved_tensors_hooks``); ``paddle.autograd.saved_tensors_hooks``
            composes (NOTE [ Raw hooks ] in ``_core/raw_hooks.py``).

    Example:
        >>> import paddle, paddle_recompute as pr
        >>> with pr.saved_tensors_hooks(lambda t: t, lambda t: t):
        ...     y = paddle.ones([2]) * 2
    """
    if not (callable(pack_hook) and callable(unpack_hook)):
        raise TypeError("saved_tensors_hooks: pack_hook and unpack_hook must be callables")
    with pushed(UserFrame(pack_hook, unpack_hook)):
        yield
