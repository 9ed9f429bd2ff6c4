"""Helpers shared by the test modules: compare a recomputed call with the plain call."""

from __future__ import annotations

import contextlib
import gc
import random
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import paddle
from paddle import nn
from paddle.base import core, framework

from paddle_recompute import recompute
from paddle_recompute.testing import assert_tensors_equal

SEED = 2024


@contextlib.contextmanager
def gc_paused():
    """Keep the cyclic garbage collector off inside.  Paddle's layers hold reference
    cycles, so an earlier test's model frees its parameters only at a collection; one that
    fires inside a measured forward reads as negative held bytes."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def seed_all(seed: int = SEED) -> None:
    """Seed Paddle, numpy and Python's random identically."""
    paddle.seed(seed)
    np.random.seed(seed)
    random.seed(seed)


def amp_state() -> tuple:
    """The dygraph tracer's autocast settings, comparable with ``==``."""
    tracer = framework._dygraph_tracer()
    white, black = tracer._get_amp_op_list()
    return (tracer._amp_level, tracer._amp_dtype, frozenset(white), frozenset(black), tracer._use_promote)


@contextlib.contextmanager
def tracer_autocast(level=core.AmpLevel.O1, dtype="bfloat16"):
    """What ``paddle.amp.auto_cast`` sets on an accelerator (on CPU it leaves autocast off)."""
    tracer = framework._dygraph_tracer()
    saved = amp_state()
    tracer._amp_level = level
    tracer._amp_dtype = dtype
    tracer._set_amp_op_list({"matmul_v2", "linear"}, {"exp", "softmax"})
    tracer._use_promote = True
    try:
        yield
    finally:
        tracer._amp_level, tracer._amp_dtype = saved[0], saved[1]
        tracer._set_amp_op_list(set(saved[2]), set(saved[3]))
        tracer._use_promote = saved[4]


def tensors_in(tree: Any) -> list:
    """Tensors inside nested tuples, lists and dicts, in order."""
    if isinstance(tree, paddle.Tensor):
        return [tree]
    if isinstance(tree, dict):
        return [t for v in tree.values() for t in tensors_in(v)]
    if isinstance(tree, (list, tuple)):
        return [t for v in tree for t in tensors_in(v)]
    return []


def structure(tree: Any) -> Any:
    """The tree with each tensor replaced by (shape, dtype, stop_gradient); types kept."""
    if isinstance(tree, paddle.Tensor):
        return ("tensor", tuple(tree.shape), str(tree.dtype), tree.stop_gradient)
    if isinstance(tree, dict):
        return {k: structure(v) for k, v in tree.items()}
    if isinstance(tree, tuple) and hasattr(type(tree), "_fields"):  # a named tuple
        return type(tree)(*(structure(v) for v in tree))
    if isinstance(tree, (list, tuple)):
        return type(tree)(structure(v) for v in tree)
    return tree


def weighted_loss(out: Any) -> paddle.Tensor | None:
    """A scalar depending on every differentiable output, each with its own weight."""
    terms = [
        t.sum() * (i + 1)
        for i, t in enumerate(tensors_in(out))
        if t.is_floating_point() and not t.stop_gradient
    ]
    return paddle.add_n(terms) if terms else None


def run_once(make: Callable, *, recompute_options: dict | None) -> tuple:
    """Seed, build ``(fn, args, kwargs, leaves)``, call (recomputed or plain), backward.

    Returns the output, its structure, and the gradients of ``leaves`` (None kept).
    """
    seed_all()
    fn, args, kwargs, leaves = make()
    if recompute_options is None:
        out = fn(*args, **kwargs)
    else:
        out = recompute(fn, *args, **recompute_options, **kwargs)
    loss = weighted_loss(out)
    if loss is not None:
        loss.backward()
    return out, structure(out), [None if t.grad is None else t.grad.numpy() for t in leaves]


def _needs_grad_only_where_plain_does_not(struct: Any, plain: Any) -> Any:
    """``struct`` with stop_gradient taken from ``plain`` where only plain says True."""
    if isinstance(struct, tuple) and struct and struct[0] == "tensor":
        if plain[3] and not struct[3]:
            return (*struct[:3], True)
        return struct
    if isinstance(struct, dict):
        return {k: _needs_grad_only_where_plain_does_not(v, plain[k]) for k, v in struct.items()}
    if isinstance(struct, (list, tuple)):
        pairs = zip(struct, plain, strict=False)  # unequal lengths fail the comparison after
        return type(struct)(_needs_grad_only_where_plain_does_not(s, p) for s, p in pairs)
    return struct


def assert_matches_plain(make: Callable, *, relaxed_flags: bool = False, **options: Any) -> Any:
    """Recomputed call == plain call: outputs, their structure and flags, leaf gradients.

    ``relaxed_flags``: a float output the plain call returns with stop_gradient=True may
    come back with stop_gradient=False (reentrant mode runs the forward under no_grad and
    cannot tell); the reverse, an output losing its gradient, always fails.
    """
    __tracebackhide__ = True
    out_plain, struct_plain, grads_plain = run_once(make, recompute_options=None)
    out, struct, grads = run_once(make, recompute_options=options)
    if relaxed_flags and struct_plain != struct:
        struct = _needs_grad_only_where_plain_does_not(struct, struct_plain)
    assert struct == struct_plain
    assert_tensors_equal(tensors_in(out), tensors_in(out_plain))
    assert_tensors_equal(grads, grads_plain)
    return out, grads


def requires_grad(t: paddle.Tensor) -> paddle.Tensor:
    t.stop_gradient = False
    return t



class RunCount:
    """Descriptor: ``self.calls += 1`` in a forward counts every run, reruns included.

    A rerun puts back the attributes a forward writes on its layers (NOTE [ Forward
    writes ]), so a plain ``int`` attribute counts once per step, as without recompute; the
    counts live here, outside the layers, where a rerun does not look.
    """

    def __init__(self):
        self.counts = weakref.WeakKeyDictionary()

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return self.counts.get(obj, 0)

    def __set__(self, obj, value):
        self.counts[obj] = value


class Counting(nn.Layer):
    """Wraps a layer and counts how often its forward runs."""

    def __init__(self, inner: nn.Layer):
        super().__init__()
        self.inner = inner

    calls = RunCount()  # forward runs, reruns included

    def forward(self, *args, **kwargs):
        self.calls += 1
        return self.inner(*args, **kwargs)


def lm_step(model, tokens, targets) -> tuple:
    """One seeded next-token step of a language model: the loss and every parameter's gradient."""
    from paddle_recompute.testing import snapshot_grads

    paddle.seed(7)
    logits = model(tokens)
    loss = paddle.nn.functional.cross_entropy(logits.reshape([-1, logits.shape[-1]]),
                                              targets.reshape([-1]))
    loss.backward()
    grads = snapshot_grads(model)
    model.clear_gradients()
    return float(loss), grads
