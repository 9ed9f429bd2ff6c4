"""Public entry points: validate options once, then dispatch to a mechanism."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any

import paddle

from .._core.errors import RecomputeError
from .._core.layers import find_roots
from .._core.nonreentrant import run_non_reentrant
from .._core.reentrant import run_reentrant
from .._core.to_static import warn_full_graph
from .._core.tree import flatten
from .._selective.frame import PolicyFrame

__all__ = ["recompute", "policy_frames"]

_CHECKS = ("default", "none")


class _PolicyFrames(threading.local):
    """Per thread: what builds the frame of a ``recompute(policy=...)`` region."""

    make = PolicyFrame


_POLICY_FRAMES = _PolicyFrames()


@contextlib.contextmanager
def policy_frames(make_frame: Callable) -> Iterator[None]:
    """In the body, this thread's policy regions are ``make_frame(policy, function, args,
    kwargs, **fields)`` (a ``PolicyFrame`` subclass, e.g. the planner's measured frame);
    other threads' are not affected (NOTE [ Threads ] in ``_core/hooks.py``)."""
    previous = _POLICY_FRAMES.make
    _POLICY_FRAMES.make = make_frame
    try:
        yield
    finally:
        _POLICY_FRAMES.make = previous


def recompute(
    function: Callable[..., Any],
    *args: Any,
    preserve_rng_state: bool = True,
    use_reentrant: bool = True,
    offload_indices: Sequence[int] | None = None,
    early_stop: bool = True,
    determinism_check: str = "default",
    debug: bool = False,
    context_fn: Callable[[], tuple] | None = None,
    policy: Callable[[Any], Any] | None = None,
    **kwargs: Any,
) -> Any:
    """Run ``function(*args, **kwargs)`` without keeping its activations; recompute them in backward.

    Drop-in for ``paddle.distributed.fleet.utils.recompute`` (same call, options and
    results), without its limits: keyword-only arguments, nested containers of tensors,
    non-tensor outputs, inputs that need no grad, BatchNorm statistics, and nesting
    (non-reentrant) all work.

    Args:
        function: a ``paddle.nn.Layer``, function, bound method, lambda or closure.
        *args: positional arguments of ``function``; tensors may sit inside tuples,
            lists and dicts.
        preserve_rng_state: replay Paddle's, numpy's, Python's, the fleet tracker's and
            registered random states, so dropout masks match the forward ones.
        use_reentrant: ``True``: a ``PyLayer`` reruns the function in its backward.
            ``False``: saved-tensor hooks rerun it when backward first needs a saved tensor
            (nestable, supports ``paddle.grad`` and repeated backward).
        offload_indices: positions in ``args`` of tensors to keep on the host until backward.
        early_stop: non-reentrant only: stop the rerun once every needed tensor is back.
        determinism_check: ``"default"`` compares count, shape, dtype and place of what the
            rerun produces with the forward; ``"none"`` skips it.
        debug: non-reentrant only: record which layer and op saved each tensor, and show
            both traces up to the first divergence when the determinism check fails.
        context_fn: non-reentrant only: returns two context managers, entered around the
            forward and around the recomputation respectively (``torch.utils.checkpoint``'s
            ``context_fn``).
        policy: non-reentrant only: selective recompute.  A predicate over
            :class:`paddle_recompute.policies.PolicyInfo` asked about every operator output
            in the region: true keeps it (and skips its operator in recomputation), false
            recomputes it, ``policies.OFFLOAD`` keeps it on the host.  See
            :mod:`paddle_recompute.policies`.
        **kwargs: keyword arguments of ``function`` (keyword-only ones included).

    Returns:
        What ``function`` returns, with the same structure.

    Raises:
        TypeError: ``function`` is not callable, or an option has the wrong type.
        ValueError: ``offload_indices`` or ``determinism_check`` is invalid, or ``policy``
            is given with ``use_reentrant=True``.
        RecomputeError: the recomputation differs from the forward.

    Example:
        >>> import paddle
        >>> from paddle_recompute import recompute
        >>> block = paddle.nn.Sequential(paddle.nn.Linear(4, 4), paddle.nn.ReLU())
        >>> x = paddle.randn([2, 4])
        >>> x.stop_gradient = False
        >>> recompute(block, x).sum().backward()
    """
    offload = _validate(function, args, preserve_rng_state, use_reentrant, offload_indices,
                        early_stop, determinism_check, debug, context_fn, policy)
    if not paddle.in_dynamic_mode():
        return _static(function, args, kwargs, offload_indices, debug, context_fn, policy)
    roots = find_roots(function, args, kwargs)
    check = determinism_check == "default"
    if use_reentrant:
        return run_reentrant(function, args, kwargs, state_roots=roots,
                             preserve_rng_state=preserve_rng_state, offload=offload, check=check)
    return run_non_reentrant(function, args, kwargs, state_roots=roots,
                             preserve_rng_state=preserve_rng_state, offload=offload,
                             check=check, early_stop=early_stop, debug=debug,
                             context_fn=context_fn,
                             make_frame=None if policy is None else partial(_POLICY_FRAMES.make, policy))


def _static(function, args, kwargs, offload_indices, debug, context_fn, policy) -> Any:
    """A region in a static program (``to_static(full_graph=True)``): Paddle's static marking,
    which saves memory only under Paddle's static recompute pass (NOTE [ to_static ])."""
    given = [name for name, value in (("policy", policy), ("offload_indices", offload_indices),
                                      ("context_fn", context_fn), ("debug", debug or None))
             if value is not None]
    if given:
        raise RecomputeError(
            f"recompute: `{given[0]}` cannot work inside paddle.jit.to_static(full_graph=True): "
            "the whole function becomes one static program, where a region is only marked for "
            "Paddle's static recompute pass. Use to_static without full_graph (under SOT the "
            "region runs eagerly, with every option), or drop the option."
        )
    warn_full_graph()
    from paddle.distributed.auto_parallel.interface import recompute as static_recompute

    return static_recompute(function)(*args, **kwargs)


def _validate(function, args, preserve_rng_state, use_reentrant, offload_indices,
              early_stop, determinism_check, debug, context_fn, policy=None) -> tuple:
    # PaddleFormers makes every tensor callable (``paddle.Tensor.__call__ = enhance_init``)
    if not callable(function) or isinstance(function, paddle.Tensor):
        raise TypeError(
            f"recompute: `function` must be callable (a paddle.nn.Layer or a function), "
            f"got {type(function).__name__}"
        )
    for name, value in (("preserve_rng_state", preserve_rng_state),
                        ("use_reentrant", use_reentrant), ("early_stop", early_stop),
                        ("debug", debug)):
        if not isinstance(value, bool):
            raise TypeError(f"recompute: `{name}` must be True or False, got {value!r}")
    if determinism_check not in _CHECKS:
        raise ValueError(
            f"recompute: `determinism_check` must be one of {_CHECKS}, got {determinism_check!r}"
        )
    if debug and use_reentrant:
        raise ValueError(
            "recompute: debug=True traces saved tensors, which only the non-reentrant mode has; "
            "pass use_reentrant=False with it"
        )
    if context_fn is not None:
        if use_reentrant:
            raise ValueError(
                "recompute: context_fn is only supported with use_reentrant=False "
                "(the reentrant mode reruns the function inside a PyLayer backward)"
            )
        if not callable(context_fn):
            raise TypeError(f"recompute: `context_fn` must be a callable returning two context "
                            f"managers, got {type(context_fn).__name__}")
    if policy is not None:
        _check_policy(policy, use_reentrant)
    return _offload_plan(args, offload_indices)


def _check_policy(policy, use_reentrant: bool) -> None:
    if not callable(policy):
        raise TypeError(
            f"recompute: `policy` must be a callable taking a policies.PolicyInfo (e.g. "
            f"paddle_recompute.policies.save_matmuls), got {type(policy).__name__}"
        )
    if use_reentrant:
        raise ValueError(
            "recompute: `policy` (selective recompute) needs use_reentrant=False: the reentrant "
            "mode reruns the whole function inside a PyLayer and cannot keep single tensors"
        )


def _offload_plan(args, offload_indices) -> tuple:
    """Map each offloaded position in ``args`` to its tensor-leaf index."""
    if offload_indices is None:
        return ()
    if isinstance(offload_indices, (str, bytes)) or not isinstance(offload_indices, Sequence):
        raise TypeError(
            f"recompute: `offload_indices` must be a list of positions in args, got {offload_indices!r}"
        )
    if not offload_indices:
        return ()
    leaf_of = {}
    count = 0
    for i, arg in enumerate(args):
        if isinstance(arg, paddle.Tensor):
            leaf_of[i] = count
            count += 1
        elif isinstance(arg, (tuple, list, dict)):
            count += len(_leaves(arg))
    plan = []
    for i in offload_indices:
        if not isinstance(i, int) or i not in leaf_of:
            raise ValueError(
                f"recompute: offload_indices entry {i!r} does not name a tensor in args "
                f"(tensor positions: {sorted(leaf_of)}); offload only plain tensor arguments"
            )
        plan.append((i, leaf_of[i]))
    return tuple(plan)


def _leaves(tree):
    return flatten(tree)[0]
