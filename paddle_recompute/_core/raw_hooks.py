"""Make Paddle's own saved-tensor APIs compose with the frame stack of ``hooks``.

NOTE [ Raw hooks ]: Paddle holds one saved-tensor hook pair at a time, and the dispatching
pair of ``hooks`` must be the only thing that ever enters or leaves Paddle's slot: swapping
pairs means resetting the slot, which crashes an operator running in another thread at that
moment (NOTE [ Threads ] in ``hooks.py``).  So ``paddle.autograd.saved_tensors_hooks`` gets
an ``__enter__`` / ``__exit__`` that push and pop a frame for the pair on the entering
thread's stack (it packs what that thread's body saves, like
``paddle_recompute.saved_tensors_hooks``).  Compared with Paddle's class: pairs nest (the
innermost packs) and regions open inside them (Paddle: "only one pair of hooks is allowed
at a time"), and a pair packs the saves of the thread that entered it, not of every
thread.  Paddle's own non-reentrant recompute enters this class, and so nests in regions.
A pair put into Paddle's core directly (``core.eager.register_saved_tensors_hooks``)
cannot be shared: a region then raises ``RecomputeError``.

``PyLayer`` contexts: with a pair installed, Paddle packs what ``save_for_backward`` got
and gives the unpacked objects to ``backward``, where plain Paddle gives the objects
themselves; it also rejects anything but tensors and crashes unpacking a list.  A thread
without frames saves them as plain Paddle does (on the context, untouched), so its
``PyLayer``s do not change while another thread's region holds the slot (NOTE [ Plain
saves ] in ``plain_saves.py``); inside frames the frames see them, as before.

Installed when ``paddle_recompute`` is imported; ``uninstall()`` puts Paddle's methods back.
"""

from __future__ import annotations

import paddle
from paddle.autograd.py_layer import PyLayerContext

from . import hooks
from .identity import unaliased

__all__ = ["install", "uninstall"]

_CLASS = paddle.autograd.saved_tensors_hooks
_PADDLE_ENTER = _CLASS.__enter__
_PADDLE_EXIT = _CLASS.__exit__
_PADDLE_SAVE = PyLayerContext.save_for_backward
_PADDLE_SAVED = PyLayerContext.saved_tensor
_FRAME_ATTR = "_paddle_recompute_frame"
_SAVED_ATTR = "_paddle_recompute_saved"


def _enter(self) -> None:
    frame = hooks.UserFrame(self.pack_hook, self.unpack_hook)
    hooks.push(frame)
    setattr(self, _FRAME_ATTR, frame)


def _exit(self, *exc: object) -> None:
    hooks.pop(self.__dict__.pop(_FRAME_ATTR))


def _save_for_backward(self, *tensors) -> None:
    tensors = unaliased(tensors)  # a reentrant rerun's PyLayer saves the parameters themselves
    if hooks.top() is None:  # no frame in this thread: plain Paddle's container, untouched
        self.__dict__[_SAVED_ATTR] = tensors
    else:
        _PADDLE_SAVE(self, *tensors)


def _saved_tensor(self):
    saved = self.__dict__.get(_SAVED_ATTR, _SAVED_ATTR)
    return _PADDLE_SAVED(self) if saved is _SAVED_ATTR else saved


_save_for_backward.__doc__ = _PADDLE_SAVE.__doc__
_saved_tensor.__doc__ = _PADDLE_SAVED.__doc__


def install() -> None:
    _CLASS.__enter__ = _enter
    _CLASS.__exit__ = _exit
    PyLayerContext.save_for_backward = _save_for_backward
    PyLayerContext.saved_tensor = _saved_tensor


def uninstall() -> None:
    _CLASS.__enter__ = _PADDLE_ENTER
    _CLASS.__exit__ = _PADDLE_EXIT
    PyLayerContext.save_for_backward = _PADDLE_SAVE
    PyLayerContext.saved_tensor = _PADDLE_SAVED
