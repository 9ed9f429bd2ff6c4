"""Observe operator calls at ``paddle._C_ops`` while a policy region is active.

Paddle's Python layers reach their kernels through module attribute lookups at call
time (``F.linear`` -> ``_C_ops.linear``, ``paddle.matmul`` -> ``_C_ops.matmul``,
``F.softmax``, ``F.dropout``, ``F.gelu``, ``F.layer_norm``, ``F.conv2d``, ``paddle.bmm``,
``paddle.einsum``, ``Tensor.reshape`` ...; checked in tests/selective/test_policies.py).  While at
least one policy frame (forward or recomputation) is running, every builtin in
``paddle._C_ops`` is replaced by a thin wrapper that hands the call to the innermost hook
frame if that frame observes operators (``observe_op``), and calls the kernel directly
otherwise.  The originals are put back when the last policy frame exits, in ``finally``,
so Paddle is untouched outside policy regions and the plain recompute path pays nothing.

Operators implemented on the C tensor type (``x + y``, ``x * y``, ``x @ y``, ``x[i]``) bypass
``_C_ops``; they are observed by replacing them on ``paddle.Tensor`` for the same span
(NOTE [ Tensor operators ] in ``tensor_methods.py``).
"""

from __future__ import annotations

import functools
import re
import threading

import paddle
from paddle import _C_ops

from . import hooks, tensor_methods

__all__ = ["installed", "unobserved", "is_installed", "draws_random", "ORIGINALS"]

ORIGINALS = {
    name: fn for name, fn in vars(_C_ops).items()
    if not name.startswith("_") and type(fn).__name__ == "builtin_function_or_method"
}

# Operators that draw random numbers (or may: attention kernels with a dropout argument).
# Over-matching only costs a skipped skip; under-matching would desync replayed RNG.
_RANDOM = re.compile(
    r"drop|rand|uniform|gauss|bernoulli|multinomial|poisson|exponential|rrelu|gumbel|"
    r"flash|attention|sampl|shuffle_batch|perm|seed"
)


@functools.lru_cache(maxsize=4096)
def draws_random(op: str) -> bool:
    """True when operator ``op`` may consume random numbers (never skipped in recomputation;
    asked twice per observed operator call, so answered from a cache)."""
    return _RANDOM.search(op) is not None


_OFF = threading.local()  # per thread: inside `unobserved`
_stacks, _ident = hooks._STACKS, threading.get_ident


_ENTERED: dict = {}  # paddle._C_ops as the first active region found it (patches included)


def _wrap(name: str, fn):
    """The observing wrapper of operator ``name``, whose kernel is ``fn``.  A function someone
    put in ``paddle._C_ops`` in place of Paddle's (a CPU stand-in for a GPU-only kernel) is
    called instead, as it would be without a region."""
    raw = ORIGINALS.get(name, fn)

    def op(*args, **kwargs):
        outside = _ENTERED.get(name, raw)
        patched = outside is not raw
        if getattr(_OFF, "on", False):
            return outside(*args, **kwargs)
        kernel = outside if patched else fn
        stack = _stacks.get(_ident())  # this thread's frames (NOTE [ Threads ] in hooks.py)
        if stack:
            observe = getattr(stack[-1], "observe_op", None)
            if observe is not None:
                return observe(name, kernel, args, kwargs)
        return kernel(*args, **kwargs)

    op.__name__ = op.__qualname__ = name
    op.__wrapped__ = fn
    return op


def _reader():
    """The ``observe_read`` of this thread's innermost frame that has one, or None."""
    if getattr(_OFF, "on", False):
        return None
    for frame in reversed(_stacks.get(_ident()) or ()):
        read = getattr(frame, "observe_read", None)
        if read is not None:
            return read
    return None


def _observer():
    """This thread's innermost frame's ``observe_op``, or None (also inside ``unobserved``)."""
    if getattr(_OFF, "on", False):
        return None
    stack = _stacks.get(_ident())
    return getattr(stack[-1], "observe_op", None) if stack else None


_WRAPPED = {name: _wrap(name, fn) for name, fn in ORIGINALS.items()}
_DEPTH = [0]
_OUTSIDE: dict = {}  # the Tensor operators in place when the first region entered, put back at the end
_LOCK = threading.Lock()


def _swap(functions: dict, methods: dict) -> None:
    vars(_C_ops).update(functions)
    for name, fn in methods.items():
        setattr(paddle.Tensor, name, fn)


def is_installed() -> bool:
    """True while the wrappers replace ``paddle._C_ops``'s operators and the Tensor operators."""
    return _DEPTH[0] > 0


class installed:
    """Context manager: operators observed for the body (nested-safe, restored in ``finally``).

    The wrappers are process-wide while any thread is inside; each thread's calls go to its
    own innermost frame, and straight to the kernel in threads without one.
    """

    __slots__ = ()

    def __enter__(self) -> None:
        with _LOCK:
            if _DEPTH[0] == 0:
                # wrap what is installed now (a layer above may have replaced Paddle's methods,
                # e.g. the MindSpore layer's type promotion), and put exactly that back on exit
                _OUTSIDE.clear()
                _OUTSIDE.update(tensor_methods.current())
                _ENTERED.clear()
                _ENTERED.update(vars(_C_ops))
                _swap(_WRAPPED, {**tensor_methods.wrapped(_observer, _OUTSIDE),
                                 **tensor_methods.reads_wrapped(_reader, _OUTSIDE)})
            _DEPTH[0] += 1

    def __exit__(self, *exc: object) -> None:
        with _LOCK:
            _DEPTH[0] -= 1
            if _DEPTH[0] == 0:
                _swap(_ENTERED, _OUTSIDE)  # what was there, patches included


class unobserved:
    """Context manager: this thread's operators are not observed in the body, even inside a
    policy region.

    For work a region does on its own behalf (calibrating, rebuilding a dropout output) that
    must not be numbered as the recomputed function's operators.
    """

    __slots__ = ("was",)

    def __enter__(self) -> None:
        self.was = getattr(_OFF, "on", False)
        _OFF.on = True

    def __exit__(self, *exc: object) -> None:
        _OFF.on = self.was
