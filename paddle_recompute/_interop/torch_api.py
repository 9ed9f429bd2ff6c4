"""``torch.utils.checkpoint``-style entry points for code ported from PyTorch.

Semantics follow PyTorch 2.x (``torch.utils.checkpoint``):

* ``use_reentrant`` should be passed.  Left out, it warns (a ``UserWarning`` naming the
  fix, as PyTorch 2.4-2.8 do) and means ``True``, PyTorch's default, so ported code runs
  unchanged; pass ``use_reentrant=False`` (recommended: nestable, ``paddle.grad``) or
  ``True`` to silence it.
* ``context_fn`` and ``debug`` need ``use_reentrant=False`` (``ValueError`` otherwise).
* ``checkpoint_sequential`` checkpoints every segment but the last, which runs normally;
  ``segments=1`` checkpoints nothing.
* ``determinism_check`` is ``"default"`` (count, shape, dtype and place of recomputed
  tensors) or ``"none"``.

Beyond PyTorch: keyword arguments reach ``function`` in both modes (PyTorch's reentrant
mode rejects them), and nested containers of tensors and non-tensor outputs work.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import paddle

from .._entry.recompute import recompute
from .sequential import callables, checked_segments, run_segments

__all__ = ["checkpoint", "checkpoint_sequential"]


_MISSING_MODE = (
    "{api}: pass use_reentrant explicitly; left out it means use_reentrant=True, as in PyTorch. "
    "use_reentrant=False is recommended (nestable, supports paddle.grad); pass use_reentrant=True "
    "to keep the current behaviour without this warning"
)
_SEQUENTIAL_OPTIONS = ("preserve_rng_state", "determinism_check", "debug", "context_fn")


def _mode(api: str, use_reentrant: bool | None) -> bool:
    """``use_reentrant``, or True with PyTorch's warning when it was left out."""
    if use_reentrant is None:
        warnings.warn(_MISSING_MODE.format(api=api), UserWarning, stacklevel=3)
        return True
    return use_reentrant


def checkpoint(
    function: Callable[..., Any],
    *args: Any,
    use_reentrant: bool | None = None,
    preserve_rng_state: bool = True,
    determinism_check: str = "default",
    debug: bool = False,
    context_fn: Callable[[], tuple] | None = None,
    **kwargs: Any,
) -> Any:
    """``torch.utils.checkpoint.checkpoint`` on Paddle.

    Args:
        function: the callable to checkpoint.
        *args, **kwargs: its arguments.
        use_reentrant: ``True`` (a PyLayer reruns the function) or ``False`` (saved-tensor
            hooks); left out, ``True`` with a ``UserWarning``, as in PyTorch 2.x.
        preserve_rng_state: replay random states in recomputation.
        determinism_check: ``"default"`` or ``"none"``.
        debug: trace saved tensors (``use_reentrant=False`` only).
        context_fn: returns (forward context, recompute context); ``use_reentrant=False`` only.

    Returns:
        ``function(*args, **kwargs)``.

    Raises:
        ValueError: ``context_fn`` or ``debug`` with the reentrant mode.

    Warns:
        UserWarning: ``use_reentrant`` was left out.

    Example:
        >>> import paddle
        >>> from paddle_recompute import checkpoint
        >>> lin = paddle.nn.Linear(4, 4)
        >>> y = checkpoint(lin, paddle.ones([2, 4]), use_reentrant=False)
    """
    reentrant = _mode("checkpoint", use_reentrant)
    return recompute(function, *args, use_reentrant=reentrant, preserve_rng_state=preserve_rng_state,
                     determinism_check=determinism_check, debug=debug, context_fn=context_fn, **kwargs)


def checkpoint_sequential(
    functions: paddle.nn.Sequential | Sequence[Callable],
    segments: int,
    input: Any,
    use_reentrant: bool | None = None,
    **kwargs: Any,
) -> Any:
    """``torch.utils.checkpoint.checkpoint_sequential`` on Paddle.

    ``functions`` are split into ``segments`` consecutive chunks (the last takes the
    remainder); every chunk but the last is checkpointed, the last runs normally.  Each
    function receives the previous one's output.

    Args:
        functions: a ``paddle.nn.Sequential`` or a list of callables.
        segments: number of chunks, from 1 to ``len(functions)``.
        input: the input of the first function.
        use_reentrant: as in :func:`checkpoint` (left out: ``True`` with a warning).
        **kwargs: checkpoint options: ``preserve_rng_state`` (as in PyTorch),
            ``determinism_check``, ``debug``, ``context_fn``.

    Returns:
        The output of the last function.

    Raises:
        ValueError: ``segments`` out of range, or an unknown keyword argument.
        TypeError: ``functions`` is not a Sequential or a list of callables.

    Warns:
        UserWarning: ``use_reentrant`` was left out.

    Example:
        >>> import paddle
        >>> from paddle_recompute import checkpoint_sequential
        >>> model = paddle.nn.Sequential(*[paddle.nn.Linear(4, 4) for _ in range(4)])
        >>> y = checkpoint_sequential(model, 2, paddle.ones([2, 4]), use_reentrant=False)
    """
    unknown = sorted(set(kwargs) - set(_SEQUENTIAL_OPTIONS))
    if unknown:
        raise ValueError(f"checkpoint_sequential: unexpected keyword arguments {unknown}; "
                         f"options: {list(_SEQUENTIAL_OPTIONS)}")
    reentrant = _mode("checkpoint_sequential", use_reentrant)
    funcs = callables("checkpoint_sequential", functions)
    segments = checked_segments("checkpoint_sequential", "segments", segments, len(funcs))
    return run_segments(funcs, segments, (input,), {}, {"use_reentrant": reentrant, **kwargs})
