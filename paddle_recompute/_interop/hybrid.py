"""``recompute_hybrid``: Paddle's hybrid-parallel recompute entry point, on this library's
reentrant mechanism.

NOTE [ Hybrid recompute ]: Paddle's ``recompute_hybrid(ctx, function, *args, **kwargs)`` is
what ``PipelineLayer(recompute_interval=k)`` and the incubate ``MoELayer`` call.  This one
takes the same arguments and ``ctx`` keys and runs ``run_reentrant`` (the PyLayer of
``recompute(use_reentrant=True)``), so it inherits that mode's behaviour: keyword and
nested arguments with gradients, non-tensor outputs, exact RNG replay (the fleet tracker's
model-parallel streams included), BatchNorm statistics updated once, autocast replayed.
What ``ctx`` adds is what the region keeps of its tensor inputs (positional and keyword):
``partition`` keeps this rank's 1/mp slice (NOTE [ Partitioned inputs ]), ``offload`` a host
copy, both a host copy of the slice.  Differences from Paddle 3.3.1's own: it runs on CPU
(Paddle's asserts a GPU and calls ``tensor.cuda()``), partition works with any number of
inputs (Paddle's overwrites its ``partition`` flag with a tensor in its loop) and any numel
(padded), and keyword tensors are saved, partitioned and get gradients.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import paddle

from .._core.layers import find_roots
from .._core.reentrant import run_reentrant
from .partition import stasher

__all__ = ["recompute_hybrid"]

_API = "recompute_hybrid"
_KEYS = ("mp_group", "offload", "partition")
_GROUP_HINT = ("the model-parallel group, e.g. "
               "fleet.get_hybrid_communicate_group().get_model_parallel_group()")


def recompute_hybrid(ctx: Mapping[str, Any], function: Callable[..., Any], *args: Any,
                     **kwargs: Any) -> Any:
    """Recompute ``function(*args, **kwargs)`` in hybrid-parallel training (tensor, pipeline,
    sharding parallel).

    Drop-in for ``paddle.distributed.fleet.recompute.recompute_hybrid`` (also
    ``paddle.incubate.distributed.fleet.recompute_hybrid``); ``patch_paddle()`` makes
    Paddle's ``PipelineLayer`` and ``MoELayer`` call this one.  See NOTE [ Hybrid recompute ].

    Args:
        ctx: ``{"mp_group": group, "offload": bool, "partition": bool}``.  ``mp_group``
            (required) is the model-parallel group; ``partition`` (default False) keeps
            only this rank's 1/mp slice of each tensor input until backward, where the group
            all-gathers it; ``offload`` (default False) keeps inputs (or slices) on the host.
        function: a ``paddle.nn.Layer``, function, bound method, lambda or closure.
        *args: positional arguments of ``function``; tensors may sit inside tuples, lists
            and dicts.
        **kwargs: keyword arguments of ``function``.

    Returns:
        What ``function`` returns, with the same structure.

    Raises:
        TypeError: ``ctx`` is not a mapping, ``function`` is not callable, ``offload`` or
            ``partition`` is not a bool, or ``mp_group`` is not a process group.
        ValueError: ``mp_group`` is missing, ``ctx`` has an unknown key, or ``partition`` is
            on and this process is not a member of ``mp_group``.
        RecomputeError: the recomputation differs from the forward.

    Example:
        >>> import paddle
        >>> from paddle_recompute import recompute_hybrid
        >>> class Solo:  # stands in for a one-rank group (partition has nothing to split)
        ...     nranks, rank = 1, 0
        >>> block = paddle.nn.Linear(4, 4)
        >>> x = paddle.randn([2, 4])
        >>> x.stop_gradient = False
        >>> recompute_hybrid({"mp_group": Solo(), "partition": True}, block, x).sum().backward()
    """
    group, offload, partition = _check_ctx(ctx)
    if not callable(function):
        raise TypeError(f"{_API}: `function` must be callable (a paddle.nn.Layer or a function), "
                        f"got {type(function).__name__}")
    if not paddle.in_dynamic_mode():
        raise RuntimeError(f"{_API} runs in dynamic (dygraph) mode only; in static graphs use "
                           "the auto-parallel recompute pass")
    return run_reentrant(function, args, kwargs, state_roots=find_roots(function, args, kwargs),
                         preserve_rng_state=True, offload=(), check=True,
                         stash=stasher(group, offload, partition), api=_API)


def _check_ctx(ctx) -> tuple:
    if not isinstance(ctx, Mapping):
        raise TypeError(f"{_API}: `ctx` must be a dict with 'mp_group' (required), 'offload' "
                        f"and 'partition', got {type(ctx).__name__}")
    unknown = sorted(set(ctx) - set(_KEYS), key=str)
    if unknown:
        raise ValueError(f"{_API}: unknown ctx key(s) {unknown}; the keys are {list(_KEYS)}")
    group = ctx.get("mp_group")
    if group is None:
        raise ValueError(f"{_API}: ctx['mp_group'] is required: {_GROUP_HINT}")
    if not all(isinstance(getattr(group, name, None), int) for name in ("nranks", "rank")):
        raise TypeError(f"{_API}: ctx['mp_group'] must be a process group with `nranks` and "
                        f"`rank` ({_GROUP_HINT}), got {type(group).__name__}")
    flags = []
    for key in ("offload", "partition"):
        value = ctx.get(key, False)
        if not isinstance(value, bool):
            raise TypeError(f"{_API}: ctx[{key!r}] must be True or False, got {value!r}")
        flags.append(value)
    if flags[1] and group.nranks > 1 and not 0 <= group.rank < group.nranks:
        raise ValueError(f"{_API}: partition=True needs this process in ctx['mp_group'] "
                         f"(its rank there is {group.rank} of {group.nranks}); pass the "
                         "model-parallel group this rank belongs to")
    return group, flags[0], flags[1]
