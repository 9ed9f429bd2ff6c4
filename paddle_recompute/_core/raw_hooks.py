"""Make ``paddle.autograd.saved_tensors_hooks`` compose with recompute regions.

NOTE [ Raw hooks ]: Paddle holds one saved-tensor hook pair at a time, and a region of ours
installs the dispatching pair of ``_hooks``.  Two cases would then fail in Paddle:
entering ``paddle.autograd.saved_tensors_hooks`` inside a region (Paddle: "only one pair
of hooks is allowed at a time"), and starting a region inside one (our pair cannot be
installed).  Paddle's own non-reentrant recompute and user code meet both.  So Paddle's
class gets an ``__enter__`` / ``__exit__`` that differ from Paddle's only in those two
cases: inside a region, the pair is pushed on our frame stack (it packs what the body
saves, like ``paddle_recompute.saved_tensors_hooks``); and a region started inside a raw
pair *adopts* it, as the bottom frame of our stack, and hands Paddle's slot back to it
when the last region ends.  Everywhere else the class behaves exactly as Paddle's.
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
    if hooks.active_frames():
        frame = hooks.UserFrame(self.pack_hook, self.unpack_hook)
        setattr(self, _FRAME_ATTR, frame)
        hooks.push(frame)
        return
    _PADDLE_ENTER(self)
    hooks.RAW_ACTIVE.append(self)


def _exit(self, *exc: object) -> None:
    frame = self.__dict__.pop(_FRAME_ATTR, None)
    if frame is not None:
        hooks.pop(frame)
        return
    _PADDLE_EXIT(self, *exc)
    if hooks.RAW_ACTIVE and hooks.RAW_ACTIVE[-1] is self:
        hooks.RAW_ACTIVE.pop()


def install() -> None:
    _CLASS.__enter__ = _enter
    _CLASS.__exit__ = _exit


def uninstall() -> None:
    _CLASS.__enter__ = _PADDLE_ENTER
    _CLASS.__exit__ = _PADDLE_EXIT
