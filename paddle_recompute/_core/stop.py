"""Ending a recomputation early, from inside a saved-tensor hook, without leaking.

NOTE [ Early stop ]: once a rerun has handed back every tensor backward needs, the rest of
the region need not run.  Raising from the pack hook would end it, but Paddle wraps the
hook's exception into an ``OSError`` with a formatted stack (tens of µs) and never frees
the argument tuple of a hook that raised: the tensor being saved at the stop point would
leak, one activation per early-stopped step.  So the hook raises nothing.  It arms a
line tracer on the Python frames between the running operator and :meth:`Stoppable.run`
and returns normally; the operator finishes, and the next Python line those frames
execute, or the next Python function they call, raises :class:`StopRecompute` there, in
plain Python, where unwinding is cheap and frees everything.  ``run`` catches it and puts
the caller's trace function (a debugger's, coverage's, or none) back.  Until then, further
pack calls of the rerun just discard what they are given.

Not every "call" from a stopping frame is a call its code made: the interpreter also runs
Python code on its own wherever a last reference goes or the collector runs: weakref
callbacks (``weakref.finalize`` and the weak containers' removers among them), ``__del__``,
the ``close()`` of a dropped generator.  An exception raised there cannot
reach :meth:`Stoppable.run`: Python prints it as "unraisable", skips the callback's body and
drops the tracer, so the rerun would not stop either.  ``_on_call`` lets such code run; the
stop comes at the stopping frame's next line.  Generators resumed on purpose (``next``) are
let through as well: they cannot be told apart from a close, and run one step at most.
"""

from __future__ import annotations

import inspect
import sys
import weakref

from . import hooks

__all__ = ["Stoppable", "StopRecompute"]

_PACK_CODE = hooks._pack.__code__
_HOOK_CODES = frozenset((_PACK_CODE, hooks._unpack.__code__))
_UNSET = object()
_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


class StopRecompute(BaseException):
    """Ends an early-stopped rerun (a BaseException: user ``except Exception`` lets it pass)."""


def _raise_on_line(frame, event, arg):
    if event == "line":
        raise StopRecompute
    return _raise_on_line


def _on_call(frame, event, arg):
    """Global tracer: a call made from a stopping frame stops too (``return f(g(x))`` has no
    line after ``g``), except our hook dispatcher, which Paddle calls from inside the op."""
    caller = frame.f_back
    if (caller is not None and caller.f_trace is _raise_on_line and frame.f_code not in _HOOK_CODES
            and not _run_by_the_interpreter(frame)):
        raise StopRecompute
    return None


def _run_by_the_interpreter(frame) -> bool:
    """Whether ``frame`` may be code the interpreter called on its own (a finaliser, a weakref
    callback, a generator's close), where an exception cannot propagate: see NOTE
    [ Early stop ].  Called only for the few calls made from a stopping frame."""
    code = frame.f_code
    if code.co_name == "__del__" or code.co_flags & _RESUMABLE:
        return True
    # a weakref callback gets the dead reference (after ``self`` for a bound method or
    # ``weakref.finalize.__call__``)
    arguments = frame.f_locals
    return any(isinstance(arguments.get(name), weakref.ReferenceType)
               for name in code.co_varnames[:min(code.co_argcount, 2)])


class Stoppable:
    """Runs a function; :meth:`stop`, called inside a pack hook, ends it at its next line."""

    __slots__ = ("stopped", "_previous")

    def __init__(self):
        self.stopped = False
        self._previous = _UNSET

    def run(self, function, args: tuple, kwargs: dict) -> None:
        """Call ``function(*args, **kwargs)``; return normally when it was stopped."""
        try:
            function(*args, **kwargs)
        except StopRecompute:
            if not self.stopped:
                raise
        finally:
            if self._previous is not _UNSET:
                sys.settrace(self._previous)
                self._previous = _UNSET

    def stop_here(self) -> None:
        """Stop from plain Python code (an operator wrapper, not a pack hook): raise now."""
        self.stopped = True
        raise StopRecompute

    def stop(self) -> None:
        """Arm the stop (see NOTE [ Early stop ]); the caller's pack hook then returns normally."""
        if self.stopped:
            return
        self.stopped = True
        frames = _frames_above_hook(sys._getframe(1), self)
        if not frames:  # not called from our hook dispatcher: let the function run to its end
            return
        self._previous = sys.gettrace()
        for frame in frames:
            frame.f_trace = _raise_on_line
        sys.settrace(_on_call)


def _frames_above_hook(frame, stoppable: Stoppable) -> list:
    """Python frames between the hook dispatcher ``hooks._pack`` and ``stoppable.run``."""
    while frame is not None and frame.f_code is not _PACK_CODE:
        frame = frame.f_back
    if frame is None:
        return []
    out = []
    frame = frame.f_back
    run_code = Stoppable.run.__code__
    while frame is not None:
        if frame.f_code is run_code and frame.f_locals.get("self") is stoppable:
            return out
        out.append(frame)
        frame = frame.f_back
    return []
