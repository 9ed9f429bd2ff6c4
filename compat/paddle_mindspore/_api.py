"""``mindspore.recompute``: recompute one call of a block."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import paddle

from paddle_recompute import extend

from . import _recipes
from ._cell import make_config
from ._region import run_region
from ._validate import check_bool

__all__ = ["recompute"]


def recompute(block: Any, *args: Any, use_reentrant: bool = True, output_recompute: bool = False,
              early_stop: bool = True, context_fn: Callable[[], tuple[Any, Any]] | None = None,
              **kwargs: Any) -> Any:
    """Run ``block(*args, **kwargs)`` without keeping its activations; recompute them in backward.

    MindSpore 2.10's ``mindspore.recompute``: with ``use_reentrant=True`` (the default) the
    block must be a Cell (a ``paddle.nn.Layer`` is accepted too); with ``use_reentrant=False``
    any callable works. ``output_recompute=True`` implies ``use_reentrant=False`` and makes the
    block's output recomputable too (merging with an adjacent recomputed block).
    ``context_fn`` (non-reentrant only) returns ``(forward_context, recompute_context)``.
    Random states are replayed, so dropout masks recomputed in backward equal the forward ones.

    Raises:
        TypeError: ``use_reentrant=True`` and ``block`` is not a Cell (MindSpore's text), or a
            flag is not a bool.
        ValueError: ``context_fn`` with ``use_reentrant=True`` (MindSpore's text).

    Example:
        >>> import numpy as np
        >>> import paddle_mindspore as ms
        >>> conv = ms.nn.Conv2d(2, 2, 2, has_bias=False, weight_init='ones')
        >>> y = ms.recompute(conv, ms.Tensor(np.ones([2, 2, 2, 2], np.float32) * 2))
    """
    for flag in (use_reentrant, output_recompute, early_stop):
        check_bool(flag)
    config = make_config(use_reentrant, output_recompute, early_stop, context_fn)
    if config.use_reentrant and not isinstance(block, paddle.nn.Layer):
        raise TypeError("Recompute function now only support block which inherited from Cell when "
                        "use_reentrant=True!")
    if not callable(block):
        raise TypeError(f"For 'recompute', the 'block' must be callable, but got {type(block).__name__}.")
    with _recipes.scope():
        return run_region(block, args, kwargs, config, extend.find_roots(block, args, kwargs))
