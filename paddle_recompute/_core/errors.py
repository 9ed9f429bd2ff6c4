"""The library's one error family, and how it survives Paddle's backward.

NOTE [ Errors in backward ]: Paddle runs saved-tensor unpack hooks and ``PyLayer.backward``
inside its C++ engine, which turns any Python exception raised there into
``OSError: (External) <type>: <message>``; ``except RecomputeError`` would never see a
recomputation that failed in backward.  So the places where our code runs inside backward
(unpack hooks, reruns' pack hooks, the reentrant backward) note the exception, per thread,
before it leaves for Paddle; that includes an exception of the recomputed function itself
during its rerun.  The engine's entry points
(``core.eager.run_backward`` and ``run_partial_grad``, behind ``Tensor.backward``,
``paddle.autograd.backward`` and ``paddle.grad``) are wrapped: when Paddle's error carries a
noted exception's message, the noted exception is raised instead, chained to Paddle's
(``raise noted from paddle_error``).  Paddle's own errors, and exceptions raised in backward
outside our hooks (a user's gradient hook, a user PyLayer), pass through unchanged.
"""

from __future__ import annotations

import threading

from paddle.base import core

__all__ = ["RecomputeError", "note_backward_error", "noted", "install_backward_errors", "retains_graph"]


class RecomputeError(RuntimeError):
    """Raised when recomputation cannot reproduce the forward pass.

    Messages start with the API name, say what differed and how to fix it.  Raised in
    backward too, as itself (NOTE [ Errors in backward ]).
    """


_NOTED = threading.local()


def note_backward_error(exc: BaseException) -> None:
    """Remember ``exc``, raised by our code inside Paddle's backward, for the engine wrapper.

    A rerun inside an unpack hook can fail in a pack hook, which Paddle converts once on the
    way out of the rerun's operator: the first exception noted stays while later ones are
    Paddle's conversions of it.
    """
    if not isinstance(exc, Exception):
        return
    noted = getattr(_NOTED, "exc", None)
    if noted is None or not _converts(exc, noted):
        _NOTED.exc = exc


def noted(exc: Exception) -> Exception:
    """``raise noted(exc)`` from code that runs inside backward: :func:`note_backward_error`."""
    note_backward_error(exc)
    return exc


def _converts(paddle_error: BaseException, noted: BaseException) -> bool:
    """Whether ``paddle_error`` is Paddle's ``(External) <type>: <message>`` of ``noted``."""
    text = str(paddle_error)
    first_line = str(noted).split("\n", 1)[0]
    return paddle_error is noted or (type(noted).__name__ in text and first_line in text)


def _restored(paddle_error: BaseException):
    """The noted exception (forgotten now) if ``paddle_error`` is Paddle's conversion of it."""
    noted = getattr(_NOTED, "exc", None)
    _NOTED.exc = None
    return noted if noted is not None and _converts(paddle_error, noted) else None


_RETAIN_AT = {"run_backward": 2, "run_partial_grad": 3}  # retain_graph's position in Paddle's calls


def retains_graph() -> bool:
    """Whether the backward running in this thread keeps its graph (True outside backward).

    Read by saved tensors that let go of their buffer once unpacked (NOTE [ Plain saves ]).
    """
    running = getattr(_NOTED, "retain", None)
    return running[-1] if running else True


def _wrap_engine(run, retain_at):
    def engine(*args, **kwargs):
        _NOTED.exc = None
        retain = args[retain_at] if len(args) > retain_at else kwargs.get("retain_graph", True)
        running = _NOTED.__dict__.setdefault("retain", [])
        running.append(bool(retain))
        try:
            return run(*args, **kwargs)
        except Exception as paddle_error:
            noted = _restored(paddle_error)
            if noted is None:
                raise
            raise noted from paddle_error
        finally:
            running.pop()

    engine.__wrapped__ = run
    engine.__name__ = getattr(run, "__name__", "engine")
    return engine


_ENGINE = {name: getattr(core.eager, name) for name in ("run_backward", "run_partial_grad")}


def install_backward_errors() -> None:
    """Wrap Paddle's engine entry points (idempotent)."""
    for name, run in _ENGINE.items():
        if getattr(core.eager, name) is run:
            setattr(core.eager, name, _wrap_engine(run, _RETAIN_AT[name]))

