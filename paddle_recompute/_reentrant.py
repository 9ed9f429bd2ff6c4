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
- Inputs live on the frame, not in ``save_for_backward``.  Paddle's ``PyLayer`` crashes the
  process on a second backward through the same node (``retain_graph=True``); a gradient
  hook on the outputs turns that into a clear error before the node runs.
"""

from __future__ import annotations

import contextlib
import inspect
import sys

import paddle
from paddle.autograd import PyLayer
from paddle.base.dygraph import base as _dygraph_base

from . import _tree
from ._amp import amp_disabled, grad_enabled
from ._check import check_count, check_same, tensor_meta
from ._errors import RecomputeError
from ._layers import ParamAliases, layer_call_params
from ._offload import to_host, to_place
from ._state import ForwardState

__all__ = ["run_reentrant"]

_API = "recompute(use_reentrant=True)"
_GRAD_CODE = inspect.unwrap(_dygraph_base.grad).__code__
_NO_CONTEXT = contextlib.nullcontext()


class _Frame:
    """Everything one reentrant call needs between forward and backward."""

    __slots__ = (
        "function", "spec", "n_inputs", "inputs", "host", "state", "out_spec", "out_meta",
        "check", "params", "anchored", "backward_runs", "leaf_keys", "__weakref__",
    )

    def detached_inputs(self) -> list:
        out = []
        for i, t in enumerate(self.inputs):
            if i in self.host:
                t = to_place(t, self.host[i])
            d = t.detach()
            d.stop_gradient = t.stop_gradient
            out.append(d)
        return out

    def guard(self, grad):
        """Gradient hook on the outputs: refuse a second backward before Paddle crashes."""
        if self.backward_runs:
            raise RecomputeError(
                f"{_API} cannot run backward twice through the same region "
                "(backward(retain_graph=True) then backward()): Paddle's PyLayer does not "
                "support it. Use recompute(..., use_reentrant=False), which does."
            )
        return grad


class _RecomputeLayer(PyLayer):
    @staticmethod
    def forward(ctx, frame: _Frame, *tensors):
        ctx.frame = frame
        inputs = tensors[: frame.n_inputs]
        args, kwargs = _tree.unflatten(frame.spec, inputs)
        with paddle.no_grad():
            outputs = frame.function(*args, **kwargs)
        frame.state.forward_done()
        out_tensors, frame.out_spec = _tree.flatten(outputs)
        if frame.check:
            frame.out_meta = [tensor_meta(t) for t in out_tensors]
        _mark_outputs(ctx, out_tensors, tensors)
        if not out_tensors:  # PyLayer needs one tensor output; this one carries no gradient
            placeholder = paddle.zeros([0])
            ctx.mark_non_differentiable(placeholder)
            return placeholder
        return tuple(out_tensors)

    @staticmethod
    def backward(ctx, *grads):
        frame: _Frame = ctx.frame
        frame.backward_runs += 1
        inputs = frame.detached_inputs()
        args, kwargs = _tree.unflatten(frame.spec, inputs)
        aliases = ParamAliases(frame.state.roots, frame.params) if frame.params else None
        with frame.state.replayed(), aliases or _NO_CONTEXT:
            out_tensors, _ = _tree.flatten(frame.function(*args, **kwargs))
        if frame.check:
            _check_outputs(frame, out_tensors)
        roots, cotangents = _differentiable(out_tensors, grads)
        if roots:
            with amp_disabled():
                paddle.autograd.backward(roots, cotangents)
        return _input_grads(frame, inputs, aliases)


def _mark_outputs(ctx, out_tensors, inputs) -> None:
    not_diff = [t for t in out_tensors if not t.is_floating_point()]
    if not_diff:
        ctx.mark_non_differentiable(*not_diff)
    passed_through = [t for t in out_tensors if any(t is i for i in inputs)]
    if passed_through:
        ctx.mark_not_inplace(*passed_through)


def _differentiable(out_tensors, grads):
    roots, cotangents = [], []
    for t, g in zip(out_tensors, grads):
        if g is not None and not t.stop_gradient:
            roots.append(t)
            cotangents.append(g)
    return roots, cotangents


def _input_grads(frame: _Frame, inputs, aliases) -> tuple:
    """One gradient (or None) per PyLayer input: tensors, then parameters or the anchor.

    Under an outer ``paddle.grad`` Paddle prunes the graph and requires None for inputs off
    the pruned paths: a leaf input (a parameter included) is on them only if it is one of
    the requested ``inputs`` (read from ``paddle.grad``'s frame, still on the stack).
    """
    param_grads = aliases.grads() if aliases is not None else [None] * len(frame.params or ())
    requested = _partial_grad_inputs()
    if requested is None:
        result = [None if t.stop_gradient else t.grad for t in inputs]
        result.extend(param_grads)
    else:
        ids = {id(t) for t in requested}
        result = [_pruned_grad(key, t, ids) for key, t in zip(frame.leaf_keys, inputs)]
        result.extend(g if id(p) in ids else None for p, g in zip(frame.params or (), param_grads))
    if frame.anchored:
        result.append(None)
    return tuple(result)


def _pruned_grad(leaf_key, detached, ids):
    if detached.stop_gradient or (leaf_key is not None and leaf_key not in ids):
        return None
    return detached.grad


def _partial_grad_inputs():
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code is _GRAD_CODE:
            return frame.f_locals.get("inputs")
        frame = frame.f_back
    return None


def _check_outputs(frame: _Frame, out_tensors) -> None:
    check_count(_API, "output tensors", len(frame.out_meta), len(out_tensors))
    for i, (meta, t) in enumerate(zip(frame.out_meta, out_tensors)):
        check_same(_API, "output tensor", i, meta, tensor_meta(t))


def _anchor() -> paddle.Tensor:
    anchor = paddle.zeros([1])
    anchor.stop_gradient = False
    return anchor


def run_reentrant(function, args, kwargs, *, state_roots, preserve_rng_state, offload, check):
    """Run ``function(*args, **kwargs)`` under a recompute PyLayer; see NOTE [ Reentrant inputs ]."""
    if not grad_enabled():
        return function(*args, **kwargs)
    tensors, spec = _tree.flatten((args, kwargs))
    frame = _Frame()
    frame.function, frame.spec, frame.check = function, spec, check
    frame.n_inputs = len(tensors)
    frame.host = {}
    frame.inputs = list(tensors)
    frame.leaf_keys = [id(t) if t.is_leaf else None for t in tensors]
    for _, leaf in offload:
        frame.inputs[leaf], frame.host[leaf] = to_host(tensors[leaf])
    frame.params = layer_call_params(function, state_roots)
    frame.anchored = frame.params is None and all(t.stop_gradient for t in tensors)
    frame.backward_runs = 0
    frame.state = ForwardState(preserve_rng_state, state_roots)
    extra = frame.params if frame.params is not None else ((_anchor(),) if frame.anchored else ())
    outputs = _RecomputeLayer.apply(frame, *tensors, *extra)
    return _finish(frame, outputs)


def _finish(frame: _Frame, outputs):
    out_tensors = (outputs,) if isinstance(outputs, paddle.Tensor) else tuple(outputs)
    for t in out_tensors:
        if not t.stop_gradient:
            t.register_hook(frame.guard)
    return _tree.unflatten(frame.out_spec, out_tensors)
