"""Reentrant recompute: a ``PyLayer`` that runs the function without grad in forward and
reruns it with grad inside its backward.

NOTE [ Reentrant inputs ]: differences from Paddle's ``RecomputeFunction`` and why.
- Arguments are flattened (any nesting of tuples/lists/dicts, keyword-only included) and
  only tensors enter the PyLayer, so no ``inspect.signature`` binding is needed.
- Outputs are flattened too: ``None`` and non-tensor values come back unchanged; integer
  outputs are non-differentiable.
- When the function is a Layer (or a bound method, partial or chain of Layers) its
  trainable parameters enter the PyLayer as inputs.  The recomputation runs with each of
  them swapped for a detached alias (``ParamAliases``), the inner backward accumulates
  into the aliases, and the PyLayer returns those gradients.  Paddle's engine then
  accumulates them like any other gradient: parameters get gradients even when no input
  needs one, ``paddle.grad`` does not touch ``.grad``, and DataParallel's reducer sees each
  parameter become ready once, at the normal time.  (A nested ``paddle.grad`` instead of
  aliases would be simpler, but costs ~50 µs more per call and corrupts Paddle's global
  partial-grad state when the outer pass is itself a ``paddle.grad``: a segfault.)
  Leaves the Layers reach other than through their parameter tables, and everything an
  opaque callable (a lambda, a closure) reaches, get their gradients accumulated directly
  by the inner backward, as in Paddle; for opaque callables a one-element anchor input
  makes sure the backward runs even when no input needs a gradient.
- Inputs live on the frame, not in ``save_for_backward``, with aliases of them that the
  rerun reads (NOTE [ Inputs as aliases ] in ``identity.py``).  Paddle's ``PyLayer`` crashes the
  process on a second backward through the same node (``retain_graph=True``); a gradient
  hook on the outputs turns that into a clear error before the node runs.  So no second
  backward comes, and the frame lets go of its inputs when its backward ends: the graph,
  and the frame with it, lives until the loss does, which in a training loop is through the
  next step's forward (NOTE [ Inputs only for a rerun ] in ``nonreentrant.py``).

NOTE [ Stashed inputs ]: the frame may keep, instead of an input tensor, a ``Stash``: an
object whose ``restore()`` gives back a tensor equal to the input (value, shape, dtype,
place and ``stop_gradient``).  ``offload_indices`` keeps host copies (``HostCopy``);
``recompute_hybrid`` keeps this rank's slice of each input (``_interop/partition.py``).  The
frame then holds no reference to the input, so its memory is freed once nothing else holds
it.  The ``paddle.grad`` pruning below still needs a non-leaf input's grad node, but reading
``Tensor.grad_fn`` in forward leaks the whole graph in Paddle 3.3 whenever no backward
follows; so a stash keeps a zero-element selection of the input (``path_marker``: its node
leads to the input's, and it holds shapes only), whose ``grad_fn`` is read only under
``paddle.grad``, as the inputs kept whole are.
"""

from __future__ import annotations

import contextlib
import inspect
import sys

import paddle
from paddle.autograd import PyLayer
from paddle.base import core
from paddle.base.dygraph import base as _dygraph_base

from . import errors, tree
from .amp import amp_disabled, grad_enabled
from .check import check_count, check_same, tensor_meta
from .errors import RecomputeError
from .identity import ALIAS_OF, aliasing, rerun_aliases
from .layers import ParamAliases, layer_call_params
from .offload import HostCopy, Stash, path_marker, to_host
from .state import ForwardState
from .versions import first_moved, rerun_input_error, versions

__all__ = ["run_reentrant"]

_API = "recompute(use_reentrant=True)"
_GRAD_CODE = inspect.unwrap(_dygraph_base.grad).__code__
_NO_CONTEXT = contextlib.nullcontext()
_NOTHING_STASHED: frozenset = frozenset()
_ALIASING = aliasing()  # PyLayers of the rerun save parameters, not aliases (NOTE [ Saved leaves ])
# What ``Tensor.is_floating_point()`` accepts, as a set (that method costs ~1.5 µs a call).
_FLOAT_DTYPES = frozenset((paddle.float16, paddle.bfloat16, paddle.float32, paddle.float64))
_READY_BEFORE = (
    "{api}: under paddle.DataParallel a parameter got its gradient twice in one backward "
    "(Paddle: 'has been ready before'). The recomputed function is not a Layer call (a "
    "lambda, closure or plain function), so the rerun's inner backward accumulates into its "
    "parameters directly, and a parameter it shares with another region or with code "
    "outside reaches DataParallel's reducer more than once. Fix: use_reentrant=False; or "
    "recompute a paddle.nn.Layer (or a bound method of one), whose parameters flow through "
    "the region; or run the step under DataParallel.no_sync() and all-reduce the "
    "gradients yourself."
)


class _Call:
    """Everything one reentrant call needs between forward and backward (not a
    saved-tensor frame: see ``nonreentrant.Frame`` for those)."""

    __slots__ = (
        "function", "spec", "n_inputs", "inputs", "values", "stashed", "state", "out_spec", "out_meta",
        "check", "params", "anchored", "backward_runs", "leaf_keys", "api", "versions", "__weakref__",
    )

    def detached_inputs(self) -> list:
        """The rerun's inputs, from the aliases (NOTE [ Inputs as aliases ]); a leaf that
        needs a gradient maps back to the input itself (NOTE [ Saved leaves ])."""
        out = []
        for i, t in enumerate(self.values):
            if i in self.stashed:
                t = original = t.restore()
            else:
                original = self.inputs[i]
            d = t.detach()
            d.stop_gradient = t.stop_gradient
            if not d.stop_gradient and original.is_leaf:  # a PyLayer saving it saves the input
                setattr(d, ALIAS_OF, original.__dict__.get(ALIAS_OF, original))
            out.append(d)
        return out

    def guard(self, grad):
        """Gradient hook on the outputs: refuse a second backward before Paddle crashes."""
        if self.backward_runs:
            raise errors.noted(RecomputeError(
                f"{self.api} cannot run backward twice through the same region "
                "(backward(retain_graph=True) then backward()): Paddle's PyLayer does not "
                "support it. Use recompute(..., use_reentrant=False), which does."
            ))
        return grad


class _RecomputeLayer(PyLayer):
    @staticmethod
    def forward(ctx, frame: _Call, *tensors):
        ctx.frame = frame
        inputs = tensors[: frame.n_inputs]
        args, kwargs = tree.unflatten_call(frame.spec, inputs)
        with paddle.no_grad():
            outputs = frame.function(*args, **kwargs)
        frame.state.forward_done()
        out_tensors, frame.out_spec = tree.flatten(outputs)
        if frame.check:
            frame.out_meta = [tensor_meta(t) for t in out_tensors]
        out_tensors = _mark_outputs(ctx, out_tensors, tensors, frame.n_inputs)
        if not out_tensors:  # PyLayer needs one tensor output; this one carries no gradient
            placeholder = paddle.zeros([0])
            ctx.mark_non_differentiable(placeholder)
            return placeholder
        return tuple(out_tensors)

    @staticmethod
    def backward(ctx, *grads):
        try:
            return _RecomputeLayer._backward(ctx, *grads)
        except BaseException as exc:
            # Paddle never frees the ctx of a PyLayer backward that raised (its argument
            # tuple leaks); let go of the frame (inputs, states, parameters) at least.
            ctx.frame = None
            errors.note_backward_error(exc)  # NOTE [ Errors in backward ]
            raise

    @staticmethod
    def _backward(ctx, *grads):
        frame: _Call = ctx.frame
        if frame.inputs is None:  # the guard on the outputs refuses this first
            raise RecomputeError(f"{frame.api} cannot run backward twice through the same region")
        frame.backward_runs += 1
        _check_versions(frame)
        inputs = frame.detached_inputs()
        args, kwargs = tree.unflatten_call(frame.spec, inputs)
        aliases = ParamAliases(frame.state.layers, frame.params) if frame.params else None
        with frame.state.replayed(frame.api), aliases or _NO_CONTEXT, _ALIASING:
            out_tensors, _ = tree.flatten(frame.function(*args, **kwargs))
        if frame.check:
            _check_outputs(frame, out_tensors)
        roots, cotangents = _differentiable(out_tensors, grads)
        if roots:
            with amp_disabled():
                try:
                    _inner_backward(roots, cotangents)
                except RuntimeError as exc:
                    if "has been ready before" not in str(exc):
                        raise
                    raise RecomputeError(_READY_BEFORE.format(api=frame.api)) from exc
        grads = _input_grads(frame, inputs, aliases)
        # no second backward: let go of them now (NOTE [ Reentrant inputs ])
        frame.inputs = frame.values = None
        return grads


def _mark_outputs(ctx, out_tensors, inputs, n_inputs) -> list:
    # An input returned as an output (or ``x.detach()`` of one) leaves as a fresh alias of
    # the same memory: PyLayer would treat it as an in-place output, and Paddle 3.3's
    # mark_not_inplace turns the caller's tensor into a non-leaf and drops the gradient
    # that flows back through that output.
    out_tensors = [_fresh_alias(t) if _is_input_alias(t, inputs, n_inputs) else t for t in out_tensors]
    not_diff = [t for t in out_tensors if t.dtype not in _FLOAT_DTYPES]
    if not_diff:
        ctx.mark_non_differentiable(*not_diff)
    return out_tensors


def _is_input_alias(t, inputs, n_inputs) -> bool:
    for i in inputs:  # loops, not any(genexpr): this runs per output of every region
        if t is i:
            return True
    for i in inputs[:n_inputs]:
        if t._is_shared_buffer_with(i):
            return True
    return False


def _fresh_alias(t):
    """A new tensor over ``t``'s memory (a copy where a view cannot be made)."""
    if t.size:
        try:
            return t.view(t.shape)
        except (RuntimeError, ValueError):
            pass
    return t.clone()


def _inner_backward(roots: list, cotangents: list) -> None:
    """``paddle.autograd.backward(roots, cotangents)`` without its argument checks (~8 µs a
    region).  Paddle's engine refuses a tensor given twice, so when the function returned
    one tensor in several places (``SimpleRNNCell`` returns ``(h, h)``) its cotangents are
    summed into one root first, as plain autograd would accumulate them."""
    if len({id(t) for t in roots}) != len(roots):
        roots, cotangents = _merge_repeated(roots, cotangents)
    core.eager.run_backward(roots, cotangents, False, None)


def _merge_repeated(roots: list, cotangents: list) -> tuple[list, list]:
    """One root per distinct tensor, with the sum of its cotangents (in output order)."""
    merged: dict[int, list] = {}
    for t, g in zip(roots, cotangents, strict=True):
        entry = merged.get(id(t))
        if entry is None:
            merged[id(t)] = [t, g]
        else:
            entry[1] = entry[1] + g
    return [t for t, _ in merged.values()], [g for _, g in merged.values()]


def _differentiable(out_tensors, grads):
    roots, cotangents = [], []
    for t, g in zip(out_tensors, grads, strict=False):  # Paddle may pass fewer grads
        if g is not None and not t.stop_gradient:
            roots.append(t)
            cotangents.append(g)
    return roots, cotangents


def _input_grads(frame: _Call, inputs, aliases) -> tuple:
    """One gradient (or None) per PyLayer input: tensors, then parameters or the anchor.

    Under an outer ``paddle.grad`` Paddle prunes the graph and requires None for inputs off
    the pruned paths: a leaf input (a parameter included) is on them only if it is one of
    the requested ``inputs`` (read from ``paddle.grad``'s frame, still on the stack); a
    non-leaf input only if a requested input's grad node is reachable from its grad node
    (Paddle's ``GeneralGrad`` "needed nodes").
    """
    param_grads = aliases.grads() if aliases is not None else [None] * len(frame.params or ())
    requested = _partial_grad_inputs()
    if requested is None:
        result = [None if t.stop_gradient else t.grad for t in inputs]
        result.extend(param_grads)
    else:
        ids = {id(t) for t in requested}
        needed = _NeededNodes(requested)
        result = [_pruned_grad(key, t, ids) if key is not None or needed(orig) else None
                  for key, t, orig in zip(frame.leaf_keys, inputs, frame.inputs, strict=False)]
        result.extend(g if id(p) in ids else None
                      for p, g in zip(frame.params or (), param_grads, strict=False))
    if frame.anchored:
        result.append(None)
    return tuple(result)


def _pruned_grad(leaf_key, detached, ids):
    if detached.stop_gradient or (leaf_key is not None and leaf_key not in ids):
        return None
    return detached.grad


class _NeededNodes:
    """Whether a non-leaf input's grad node (of a tensor or a stash) leads to a requested
    input's grad node."""

    def __init__(self, requested):
        self.targets = {t.grad_fn.node_ptr() for t in requested if t.grad_fn is not None}
        self.memo: dict[int, bool] = {}

    def __call__(self, tensor) -> bool:
        node = tensor.grad_fn
        return node is not None and self._reaches(node)

    def _reaches(self, root) -> bool:
        memo, targets = self.memo, self.targets
        stack, seen, found = [root], [], False
        while stack:
            node = stack.pop()
            ptr = node.node_ptr()
            if ptr in memo:
                if memo[ptr]:
                    found = True
                    break
                continue
            memo[ptr] = False
            seen.append(ptr)
            if ptr in targets:
                found = True
                break
            stack.extend(n for n in node.next_functions if n is not None)
        if found:  # every node on the current path may lead there: recompute those lazily
            for ptr in seen:
                memo.pop(ptr, None)
            memo[root.node_ptr()] = True
        return found


def _partial_grad_inputs():
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code is _GRAD_CODE:
            return frame.f_locals.get("inputs")
        frame = frame.f_back
    return None


def _check_versions(frame: _Call) -> None:
    """Refuse a rerun from inputs written in place since the forward (kept copies aside)."""
    moved = first_moved(frame.values, frame.versions, frame.stashed)  # aliases share the counter
    if moved >= 0:
        raise rerun_input_error(frame.api, frame.function, frame.spec, moved,
                                frame.values[moved]._inplace_version(), frame.versions[moved])


def _check_outputs(frame: _Call, out_tensors) -> None:
    check_count(frame.api, "output tensors", len(frame.out_meta), len(out_tensors))
    for i, (meta, t) in enumerate(zip(frame.out_meta, out_tensors, strict=True)):  # counts checked above
        check_same(frame.api, "output tensor", i, meta, tensor_meta(t))


def _anchor() -> paddle.Tensor:
    anchor = paddle.zeros([1])
    anchor.stop_gradient = False
    return anchor


def run_reentrant(function, args, kwargs, *, state_roots, preserve_rng_state, offload, check,
                  stash=None, api=_API):
    """Run ``function(*args, **kwargs)`` under a recompute PyLayer; see NOTE [ Reentrant inputs ].

    ``offload`` lists ``(position, leaf)`` pairs of inputs to keep on the host; ``stash``,
    when given, is called on every tensor input and returns what the region keeps of it
    (see NOTE [ Stashed inputs ]).  ``api`` names the caller in error messages.
    """
    if not grad_enabled():
        return function(*args, **kwargs)
    tensors, spec = tree.flatten_call(args, kwargs)
    frame = _Call()
    frame.function, frame.spec, frame.check, frame.api = function, spec, check, api
    frame.n_inputs = len(tensors)
    frame.inputs = list(tensors)
    frame.versions = versions(tensors)  # NOTE [ Rerun inputs ] in versions.py
    frame.leaf_keys = [id(t) if t.is_leaf else None for t in tensors]
    frame.stashed = _stash_inputs(frame.inputs, offload, stash)
    frame.values = rerun_aliases(frame.inputs, frame.stashed)  # NOTE [ Inputs as aliases ]
    frame.state = ForwardState(preserve_rng_state, state_roots, watch=True)
    frame.params = layer_call_params(function, frame.state.layers)
    frame.anchored = frame.params is None and _none_needs_grad(tensors)
    frame.backward_runs = 0
    extra = frame.params if frame.params is not None else ((_anchor(),) if frame.anchored else ())
    outputs = _RecomputeLayer.apply(frame, *tensors, *extra)
    return _finish(frame, outputs)


def _none_needs_grad(tensors) -> bool:
    for t in tensors:
        if not t.stop_gradient:
            return False
    return True


def _stash_inputs(inputs: list, offload, stash) -> frozenset:
    """Replace inputs by their stashes in place; returns the indices replaced."""
    if not offload and stash is None:
        return _NOTHING_STASHED
    for _, leaf in offload:
        t = inputs[leaf]
        inputs[leaf] = HostCopy(*to_host(t), path_marker(t))
    if stash is not None:
        for i, t in enumerate(inputs):
            if isinstance(t, paddle.Tensor):
                inputs[i] = stash(t)
    return frozenset(i for i, t in enumerate(inputs) if isinstance(t, Stash))


def _finish(frame: _Call, outputs):
    out_tensors = (outputs,) if isinstance(outputs, paddle.Tensor) else tuple(outputs)
    for t in out_tensors:
        if not t.stop_gradient:
            t.register_hook(frame.guard)
    return tree.unflatten(frame.out_spec, out_tensors)
