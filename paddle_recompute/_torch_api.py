"""``torch.utils.checkpoint``-style entry points for code ported from PyTorch.

Semantics follow PyTorch 2.x: ``use_reentrant`` must be passed explicitly (PyTorch warns
and will raise), ``context_fn`` needs ``use_reentrant=False``, and
``checkpoint_sequential`` leaves its last segment un-checkpointed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import paddle

from ._api import recompute
from ._sequential import callables, checked_segments, run_segments

__all__ = ["checkpoint", "checkpoint_sequential"]


def _require_mode(api: str, use_reentrant) -> bool:
    if use_reentrant is None:
        raise ValueError(
            f"{api}: pass use_reentrant=True or use_reentrant=False explicitly, as PyTorch "
            "requires; use_reentrant=False is recommended (nestable, supports paddle.grad)"
        )
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
        use_reentrant: required, as in PyTorch.
        preserve_rng_state: replay random states in recomputation.
        determinism_check: ``"default"`` or ``"none"``.
        debug: trace saved tensors (``use_reentrant=False`` only).
        context_fn: returns (forward context, recompute context); ``use_reentrant=False`` only.

    Returns:
        ``function(*args, **kwargs)``.

    Raises:
        ValueError: ``use_reentrant`` not given, or ``context_fn``/``debug`` with reentrant mode.

    Example:
        >>> import paddle
        >>> from paddle_recompute import checkpoint
        >>> lin = paddle.nn.Linear(4, 4)
        >>> y = checkpoint(lin, paddle.ones([2, 4]), use_reentrant=False)
    """
    reentrant = _require_mode("checkpoint", use_reentrant)
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

    Every segment but the last is checkpointed; ``kwargs`` are checkpoint options
    (``preserve_rng_state``, ``determinism_check``, ...).

    Raises:
        ValueError: ``use_reentrant`` not given, or ``segments`` out of range.

    Example:
        >>> import paddle
        >>> from paddle_recompute import checkpoint_sequential
        >>> model = paddle.nn.Sequential(*[paddle.nn.Linear(4, 4) for _ in range(4)])
        >>> y = checkpoint_sequential(model, 2, paddle.ones([2, 4]), use_reentrant=False)
    """
    reentrant = _require_mode("checkpoint_sequential", use_reentrant)
    funcs = callables("checkpoint_sequential", functions)
    segments = checked_segments("checkpoint_sequential", "segments", segments, len(funcs))
    return run_segments(funcs, segments, (input,), {}, {"use_reentrant": reentrant, **kwargs})
