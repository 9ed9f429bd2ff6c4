"""Autocast and grad-mode state of Paddle's dygraph tracer.

The only module that reads Paddle's private tracer fields: AMP level, dtype, op lists and
type promotion, plus ``paddle.amp.auto_cast``'s module state.  Setting the fields directly
replays the exact state (``paddle.amp.auto_cast`` would re-validate and remap dtypes).
"""

from __future__ import annotations

import importlib

from paddle.base import core, framework

__all__ = ["AmpState", "grad_enabled", "set_grad_enabled", "amp_disabled"]

_O0 = core.AmpLevel.O0
# `paddle.amp.auto_cast` is also a function name; fetch the module itself.
_auto_cast_module = importlib.import_module("paddle.amp.auto_cast")


# Paddle keeps the dygraph tracer in a thread-local (``framework.global_var``); reading the
# attribute directly is ``framework._dygraph_tracer()`` without two Python calls per use.
_GLOBAL = framework.global_var


def grad_enabled() -> bool:
    return bool(_GLOBAL._dygraph_tracer_._has_grad)


def set_grad_enabled(flag: bool) -> None:
    _GLOBAL._dygraph_tracer_._has_grad = flag


class AmpState:
    """Value snapshot of the tracer's autocast settings.

    ``capture()`` returns None when autocast is off: then the op lists, dtype and promotion
    flag have no effect, and replay only has to make sure autocast is off too.
    """

    __slots__ = ("level", "dtype", "lists", "promote", "module_state")

    @classmethod
    def capture(cls) -> AmpState | None:
        if _GLOBAL._dygraph_tracer_._amp_level == _O0:
            return None
        return cls.capture_full()

    @classmethod
    def capture_full(cls) -> AmpState:
        tracer = _GLOBAL._dygraph_tracer_
        self = cls.__new__(cls)
        self.level = tracer._amp_level
        self.dtype = tracer._amp_dtype
        self.lists = tracer._get_amp_op_list()
        self.promote = tracer._use_promote
        self.module_state = _auto_cast_module._g_amp_state_
        return self

    def apply(self) -> None:
        tracer = _GLOBAL._dygraph_tracer_
        tracer._amp_level = self.level
        tracer._amp_dtype = self.dtype
        tracer._set_amp_op_list(*self.lists)
        tracer._use_promote = self.promote
        _auto_cast_module._g_amp_state_ = self.module_state

    @staticmethod
    def swap(target: AmpState | None) -> AmpState | bool:
        """Make ``target`` current; return what to ``restore`` afterwards (False: nothing)."""
        if target is None:
            current = AmpState.capture()
            if current is None:
                return False
            _GLOBAL._dygraph_tracer_._amp_level = _O0
            return current
        current = AmpState.capture_full()
        target.apply()
        return current

    @staticmethod
    def restore(previous: AmpState | bool) -> None:
        if previous is not False:
            previous.apply()


class amp_disabled:
    """Context manager: autocast off (for the inner backward), restored afterwards.  A class,
    not a generator context manager: it runs once per reentrant backward."""

    __slots__ = ("tracer", "level")

    def __enter__(self) -> None:
        self.tracer = tracer = _GLOBAL._dygraph_tracer_
        self.level = tracer._amp_level
        tracer._amp_level = _O0

    def __exit__(self, *exc: object) -> None:
        self.tracer._amp_level = self.level
