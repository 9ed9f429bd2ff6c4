"""Make ``paddle.autograd.saved_tensors_hooks`` compose with recompute regions.

NOTE [ Raw hooks ]: Paddle holds one saved-tensor hook pair at a time, and a region of ours
installs the dispatching pair of ``_hooks``.  Two cases would then fail in Paddle:
entering ``paddle.autograd.saved_tensors_hooks`` inside a region (Paddle: "only one pair
of hooks is allowed at a time"), and starting a region inside one (our pair cannot be
installed).  Paddle's own non-reentrant recompute and user code meet both.  So Paddle's
class gets an ``__enter__`` / ``__exit__`` that differ from Paddle's only in those two
cases: while our pair is installed (a region is open in any thread), the pair is pushed on
the entering thread's frame stack (it packs what that thread's body saves, like
``paddle_recompute.saved_tensors_hooks``); and a region started while a raw pair holds
Paddle's slot *adopts* it, as the bottom frame of the stack of the thread that entered it,
and hands Paddle's slot back to it when the last region ends (or forgets it, if that thread
exits it first).  Everywhere else the class behaves exactly as Paddle's.  A pair put into
Paddle's core directly (``core.eager.register_saved_tensors_hooks``) cannot be adopted: a
region then raises ``RecomputeError``, in any thread (NOTE [ Threads ] in ``hooks.py``).
Installed when ``paddle_recompute`` is imported; ``uninstall()`` puts Paddle's methods back.
"""

from __future__ import annotations

import paddle

from . import hooks

__all__ = ["install", "uninstall"]

_CLASS = paddle.autograd.saved_tensors_hooks
_PADDLE_ENTER = _CLASS.__enter__
_PADDLE_EXIT = _CLASS.__exit__
_FRAME_ATTR = "_paddle_recompute_frame"


def _enter(self) -> None:
    frame = hooks.enter_raw(self, _PADDLE_ENTER)
    if frame is not None:  # some thread has a region: this thread's saves go through our pair
        setattr(self, _FRAME_ATTR, frame)


def _exit(self, *exc: object) -> None:
    frame = self.__dict__.pop(_FRAME_ATTR, None)
    if frame is not None:
        hooks.pop(frame)
    else:
        hooks.exit_raw(self, lambda: _PADDLE_EXIT(self, *exc))


def install() -> None:
    _CLASS.__enter__ = _enter
    _CLASS.__exit__ = _exit


def uninstall() -> None:
    _CLASS.__enter__ = _PADDLE_ENTER
    _CLASS.__exit__ = _PADDLE_EXIT
