"""Route Paddle's own recompute entry points to this library, and back.

Libraries that call ``paddle.distributed.fleet.utils.recompute`` (PaddleFormers' model code,
for one) often imported the name long before the user could patch anything.  Rebinding
module attributes would miss those references, so the patch swaps the ``__code__`` of
Paddle's functions for a shim that forwards to ours: every reference, old or new, runs our
code, and ``unpatch_paddle`` puts the original code objects back.

Covered entry points (Paddle 3.x): ``paddle.distributed.fleet.recompute.recompute.recompute``
(also exported as ``paddle.distributed.fleet.recompute.recompute``), its
``recompute_sequential`` (also ``paddle.incubate.distributed.fleet.recompute_sequential``),
``paddle.distributed.fleet.utils.recompute``, a separate function that calls the first
one at call time, and ``paddle.distributed.fleet.recompute.recompute_hybrid.recompute_hybrid``
(also exported as ``paddle.distributed.fleet.recompute.recompute_hybrid`` and
``paddle.incubate.distributed.fleet.recompute_hybrid``, and bound at import by
``PipelineLayer``'s module ``pp_layers`` and by the incubate ``MoELayer``'s ``moe_layer``).
Not covered: the static-graph ``paddle.distributed.auto_parallel`` recompute.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator

__all__ = ["patch_paddle", "unpatch_paddle", "paddle_patched", "is_patched"]

# (module, function name) pairs whose code is swapped.  The same function object is
# re-exported under other names (fleet.utils.recompute, fleet.recompute.recompute,
# incubate.distributed.fleet.recompute_sequential, pp_layers.recompute_hybrid, ...):
# swapping the object covers them all.  (The package attribute
# ``fleet.recompute.recompute_hybrid`` is the function, hiding the module of the same
# name; ``import_module`` finds the module in ``sys.modules``.)
_TARGETS = (
    ("paddle.distributed.fleet.recompute.recompute", "recompute"),
    ("paddle.distributed.fleet.recompute.recompute", "recompute_sequential"),
    ("paddle.distributed.fleet.recompute.recompute_hybrid", "recompute_hybrid"),
)
_ORIGINAL: dict[int, tuple[object, object]] = {}


# A shim's code runs as Paddle's function, with the globals of Paddle's module: it imports
# what it calls by absolute name.
def _recompute_shim(function, *args, **kwargs):
    from paddle_recompute._entry.recompute import recompute

    return recompute(function, *args, **kwargs)


def _sequential_shim(ctx, functions, *args, **kwargs):
    from paddle_recompute._interop.sequential import recompute_sequential

    return recompute_sequential(ctx, functions, *args, **kwargs)


def _hybrid_shim(ctx, function, *args, **kwargs):
    from paddle_recompute._interop.hybrid import recompute_hybrid

    return recompute_hybrid(ctx, function, *args, **kwargs)


_SHIMS = {"recompute": _recompute_shim, "recompute_sequential": _sequential_shim,
          "recompute_hybrid": _hybrid_shim}


def _functions():
    for module_name, name in _TARGETS:
        yield getattr(importlib.import_module(module_name), name), _SHIMS[name]


def is_patched() -> bool:
    """Whether :func:`patch_paddle` is in effect."""
    return bool(_ORIGINAL)


def patch_paddle() -> None:
    """Make Paddle's ``recompute``, ``recompute_sequential`` and ``recompute_hybrid`` run
    paddle-recompute.

    Covers ``paddle.distributed.fleet.utils.recompute``,
    ``paddle.distributed.fleet.recompute.recompute.recompute``,
    ``paddle.incubate.distributed.fleet.recompute_sequential`` and
    ``recompute_hybrid`` wherever Paddle binds it (``paddle.distributed.fleet.recompute``,
    ``paddle.incubate.distributed.fleet``, ``PipelineLayer``'s ``pp_layers``, the incubate
    ``MoELayer``), including references imported before the call.  Idempotent.

    Example:
        >>> import paddle_recompute
        >>> paddle_recompute.patch_paddle()
        >>> paddle_recompute.unpatch_paddle()
    """
    if _ORIGINAL:
        return
    targets = list(_functions())  # import everything first: a failing import patches nothing
    for fn, shim in targets:
        _ORIGINAL[id(fn)] = (fn, fn.__code__)
        fn.__code__ = shim.__code__


def unpatch_paddle() -> None:
    """Restore Paddle's original functions exactly (a no-op when not patched).

    The function objects never changed; each gets its original code object back.
    """
    while _ORIGINAL:
        _, (fn, code) = _ORIGINAL.popitem()
        fn.__code__ = code


@contextlib.contextmanager
def paddle_patched() -> Iterator[None]:
    """Context manager form of :func:`patch_paddle` / :func:`unpatch_paddle`.

    Leaves a patch that was already in effect in place.

    Example:
        >>> import paddle
        >>> from paddle.distributed.fleet.utils import recompute
        >>> from paddle_recompute import paddle_patched
        >>> block = paddle.nn.Linear(4, 4)
        >>> with paddle_patched():
        ...     y = recompute(block, paddle.ones([2, 4]), use_reentrant=False)  # runs ours
    """
    already = is_patched()
    patch_paddle()
    try:
        yield
    finally:
        if not already:
            unpatch_paddle()
