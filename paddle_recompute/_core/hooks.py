"""One process-wide pair of saved-tensor hooks, shared by a stack of frames per thread.

Paddle allows a single ``saved_tensors_hooks`` pair at a time, so regions cannot each
install their own.  Instead the first active frame installs one dispatching pair and every
frame (recompute regions, recomputations, offload, user hooks registered through
:func:`saved_tensors_hooks` or ``paddle.autograd.saved_tensors_hooks``) pushes itself on its
thread's stack; the innermost frame of the thread that saves a tensor packs it.

NOTE [ Threads ]: Paddle's hook slot is process-wide, but grad mode, autocast and the
``sys.settrace`` that early stop uses are per thread, and so are the frame stacks here.
While the dispatching pair is installed, a thread with no frame of its own saves through
it exactly as plain Paddle would (:mod:`._core.plain_saves`, NOTE [ Plain saves ]), so
another thread's training, evaluation or EMA model is neither captured by a region nor
changed by it.

Paddle reads its slot without a lock, from operators that run without the GIL: an operator
that finds the slot enabled and then reads a hook that ``reset_saved_tensors_hooks`` has
just cleared dereferences null (the crash seen once in 15 runs of tests/core/test_threads.py).
Installing is safe (Paddle sets the hooks before the enabled flag); removing is not.  So
the pair is removed only when no other thread can be inside an operator: when no other
thread runs Python at all (``sys._current_frames()`` holds this thread alone; a new
thread needs this one's GIL to start), checked when the last frame ends and, lazily, on
the next plain save after the other threads have ended; and at interpreter exit (Paddle's
static hook slot would otherwise destroy our pair after Python is gone, which hangs the
process).  While other threads are alive the pair stays installed between regions and
their saves go through :class:`~.plain_saves.Plain`: the cost is measured in
docs/benchmarks.md, Threads.

Paddle's random generators, however, are process-wide: threads that draw
random numbers at the same time interleave their draws (with or without recompute), and a
region's rerun replays its forward's state only if no other thread draws meanwhile.

Invariant: the object a frame's ``pack`` returns has an ``unpack()`` method, and
``obj.unpack()`` equals the packed tensor in value, shape, dtype and place.
"""

from __future__ import annotations

import atexit
import contextlib
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from paddle.base import core

from . import errors
from .amp import set_grad_enabled
from .errors import RecomputeError, retains_graph
from .identity import detached, kept
from .plain_saves import Plain, spent

__all__ = ["pushed", "push", "pop", "saved_tensors_hooks", "active_frames", "top", "UserFrame",
           "Kept", "installed", "release_idle", "frame_count"]

_get_ident = threading.get_ident
_active_count = threading.active_count
_STACKS: dict[int, list] = {}  # thread ident -> its frames, innermost last (threads with frames)
_LOCK = threading.RLock()
_STATE = {"installed": False, "owned": 0}  # our pair in Paddle's slot; frames pushed, all threads


def _pack(tensor):
    try:
        stack = _STACKS.get(_get_ident())
        if not stack:  # a thread without frames: see NOTE [ Threads ]
            if _STATE["owned"] == 0 and _active_count() == 1:
                release_idle()  # the threads that kept the pair installed have ended
            return Plain(detached(tensor))
        return stack[-1].pack(tensor)
    except BaseException as exc:
        errors.note_backward_error(exc)  # a rerun's pack hook runs inside backward
        _regrad()
        raise


def _unpack(packed):
    try:
        return packed.unpack()
    except BaseException as exc:
        errors.note_backward_error(exc)
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
    """This thread's frames, outermost first."""
    return tuple(_STACKS.get(_get_ident(), ()))


def top():
    """This thread's innermost frame, or None."""
    stack = _STACKS.get(_get_ident())
    return stack[-1] if stack else None


def installed() -> bool:
    """Whether the dispatching pair holds Paddle's slot."""
    return _STATE["installed"]


def frame_count() -> int:
    """The frames pushed now, all threads."""
    return _STATE["owned"]


def _install() -> None:
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
    _STATE["installed"] = True


def _alone() -> bool:
    """No other thread runs Python, so none is inside a Paddle operator (NOTE [ Threads ])."""
    return len(sys._current_frames()) == 1


def push(frame) -> None:
    """Make ``frame`` this thread's innermost packer (installs the dispatching pair if needed)."""
    with _LOCK:
        if not _STATE["installed"]:
            _install()
        _STACKS.setdefault(_get_ident(), []).append(frame)
        _STATE["owned"] += 1


def pop(frame) -> None:
    """Undo :func:`push` of ``frame`` (this thread's innermost frame)."""
    with _LOCK:
        ident = _get_ident()
        stack = _STACKS.get(ident)
        if not stack or stack[-1] is not frame:
            raise RecomputeError(
                "saved-tensor hooks were exited out of order: each must be exited inside the "
                "region or hook context it was entered in"
            )
        stack.pop()
        if not stack:
            del _STACKS[ident]
        _STATE["owned"] -= 1
        release_idle()


def release_idle() -> bool:
    """Give Paddle's slot back if no frame is left and no other thread runs (NOTE [ Threads ]);
    True if the pair is not installed afterwards."""
    with _LOCK:
        if _STATE["installed"] and _STATE["owned"] == 0 and _alone():
            core.eager.reset_saved_tensors_hooks()
            _STATE["installed"] = False
        return not _STATE["installed"]


def forget_all() -> None:
    """Drop every frame of every thread and give Paddle's slot back (test clean-up only)."""
    with _LOCK:
        _STATE["owned"] = 0
        _STACKS.clear()
        release_idle()


@atexit.register
def _release_at_exit() -> None:
    """Empty Paddle's slot before Python finalises: Paddle's static slot would destroy our
    pair after the interpreter is gone, and its destructor waits for the GIL forever.
    Non-daemon threads have been joined by now."""
    with _LOCK:
        if _STATE["installed"]:
            core.eager.reset_saved_tensors_hooks()
            _STATE["installed"] = False


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
    views (same buffer, no autograd meta).  Once unpacked it lets go of the tensor unless the
    backward retains the graph (NOTE [ Plain saves ] in ``plain_saves.py``).  A parameter
    or a leaf that needs a gradient is kept as itself (NOTE [ Saved leaves ] in
    ``identity.py``): a leaf's grad node holds no saver.
    """

    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = kept(tensor)

    def unpack(self):
        tensor = self.tensor
        if tensor is None:
            raise spent()
        if not retains_graph():
            self.tensor = None
        return tensor


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
