"""Reentrant recompute: a ``PyLayer`` that runs the function without grad in forward and
reruns it with grad inside its backward.

Differences from Paddle's ``RecomputeFunction`` and why:
- Arguments are flattened (any nesting of tuples/lists/dicts, keyword-only included) and
  only tensors enter the PyLayer, so no ``inspect.signature`` binding is needed.
- Outputs are flattened too: ``None`` and non-tensor values come back unchanged, integer
  outputs are non-differentiable.
- If no input tensor needs a gradient but the function has trainable parameters, a
  one-element anchor tensor that needs a gradient joins the inputs, so Paddle calls the
  backward and the parameters get their gradients.
- Inputs are kept on the frame, not through ``save_for_backward``, so a second backward
  with ``retain_graph=True`` recomputes again instead of crashing.
"""

from __future__ import annotations

import paddle
from paddle.autograd import PyLayer

from . import _tree
from ._amp import amp_disabled, grad_enabled
from ._check import check_count, check_same, tensor_meta
from ._errors import RecomputeError
from ._layers import trainable_params
from ._offload import to_host, to_place
from ._state import ForwardState

__all__ = ["run_reentrant"]

_API = "recompute(use_reentrant=True)"


class _Frame:
    """Everything one reentrant call needs between forward and backward."""

    __slots__ = (
        "function", "spec", "n_inputs", "inputs", "host", "state", "out_spec", "out_meta",
        "check", "anchored",
    )

    def rebuilt_args(self, tensors):
        args, kwargs = _tree.unflatten(self.spec, tensors)
        return args, kwargs

    def detached_inputs(self) -> list:
        out = []
        for i, t in enumerate(self.inputs):
            if i in self.host:
                t = to_place(t, self.host[i])
            d = t.detach()
            d.stop_gradient = t.stop_gradient
            out.append(d)
        return out


class _RecomputeLayer(PyLayer):
    @staticmethod
    def forward(ctx, frame: _Frame, *tensors):
        ctx.frame = frame
        args, kwargs = frame.rebuilt_args(tensors[: frame.n_inputs])
        with paddle.no_grad():
            outputs = frame.function(*args, **kwargs)
        out_tensors, frame.out_spec = _tree.flatten(outputs)
        if frame.check:
            frame.out_meta = [tensor_meta(t) for t in out_tensors]
        not_diff = [t for t in out_tensors if not t.is_floating_point()]
        if not_diff:
            ctx.mark_non_differentiable(*not_diff)
        return tuple(out_tensors)

    @staticmethod
    def backward(ctx, *grads):
        frame: _Frame = ctx.frame
        if frame is None:
            raise RecomputeError(f"{_API}: backward called after the frame was released")
        inputs = frame.detached_inputs()
        args, kwargs = frame.rebuilt_args(inputs)
        with frame.state.replayed():
            outputs = frame.function(*args, **kwargs)
            out_tensors, _ = _tree.flatten(outputs)
        if frame.check:
            _check_outputs(frame, out_tensors)
        roots, cotangents = [], []
        for t, g in zip(out_tensors, grads):
            if g is not None and not t.stop_gradient:
                roots.append(t)
                cotangents.append(g)
        if roots:
            with amp_disabled():
                paddle.autograd.backward(roots, cotangents)
        result = [None if t.stop_gradient else t.grad for t in inputs]
        if frame.anchored:
            result.append(None)
        return tuple(result)


def _check_outputs(frame: _Frame, out_tensors) -> None:
    check_count(_API, "output tensors", len(frame.out_meta), len(out_tensors))
    for i, (meta, t) in enumerate(zip(frame.out_meta, out_tensors)):
        check_same(_API, "output tensor", i, meta, tensor_meta(t))


def _needs_anchor(function, tensors, roots) -> bool:
    if any(not t.stop_gradient for t in tensors):
        return False
    if roots and _is_layer_call(function, roots):
        return trainable_params(roots)
    return True  # an opaque callable may close over trainable tensors: stay correct


def _is_layer_call(function, roots) -> bool:
    owner = getattr(function, "__self__", function)
    return owner is roots[0]


def run_reentrant(function, args, kwargs, *, state_roots, preserve_rng_state, offload, check):
    """Run ``function(*args, **kwargs)`` under a recompute PyLayer; see module docstring."""
    tensors, spec = _tree.flatten((args, kwargs))
    if not grad_enabled():
        return function(*args, **kwargs)
    frame = _Frame()
    frame.function = function
    frame.spec = spec
    frame.n_inputs = len(tensors)
    frame.check = check
    frame.host = {}
    frame.inputs = list(tensors)
    for arg_index, leaf_index in offload:
        frame.inputs[leaf_index], frame.host[leaf_index] = to_host(tensors[leaf_index])
    frame.anchored = _needs_anchor(function, tensors, state_roots)
    frame.state = ForwardState(preserve_rng_state, state_roots)
    apply_inputs = list(tensors)
    if frame.anchored:
        anchor = paddle.zeros([1])
        anchor.stop_gradient = False
        apply_inputs.append(anchor)
    out_tensors = _RecomputeLayer.apply(frame, *apply_inputs)
    if isinstance(out_tensors, paddle.Tensor):
        out_tensors = (out_tensors,)
    return _tree.unflatten(frame.out_spec, out_tensors or ())
