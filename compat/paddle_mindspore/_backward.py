"""The grad transforms' backward pass, run so that it frees each activation as it goes.

NOTE [ A lean backward ]: ``paddle.grad`` runs on a copy of the backward graph (Paddle's
``GeneralGrad``). The copy's saved tensors are cleared as it goes, but the graph itself, held
by the outputs until the transform returns, keeps every saved activation to the end: a
training step under ``paddle.grad`` peaks at all its activations plus all its gradients.
``paddle.autograd.backward`` runs on the graph itself and clears each node's saved tensors
once the node has run, as MindSpore's backward frees activations. So the transforms run it,
seeded as ``paddle.grad`` would be, and read each gradient from the ``.grad`` of the tensor it
belongs to, whenever that gives what ``paddle.grad`` gives (the same engine sums the same
contributions in the same order):
- every requested tensor is a leaf (a non-leaf keeps no ``.grad``);
- every leaf the backward can reach is requested, or is one of the transform's own copies
  (a grad-position input's copy, a recorded forward's copy of an input: ``private``). The
  graph is read from the outputs before anything runs, and each leaf shows there as its
  accumulation node, so no tensor outside the transform gets a ``.grad``;
- every other node reached leads to a requested leaf: ``paddle.grad`` prunes a node that does
  not (one that leads only to a private copy), and so skips the hooks on its outputs and any
  recompute region's rerun in it, which the backward would run. A node that leads to both
  computes the private copy's gradient too (a convolution's gradient for its input, say),
  which is dropped: work that changes no result;
- no output is given twice (Paddle's backward refuses a tensor given twice).
A requested leaf's ``.grad`` from before is set aside and put back afterwards (its values, in
a new buffer), and a private copy's ``.grad`` is dropped; a requested leaf the reading did not
reach gets None, as under ``paddle.grad``. When a condition fails, the transform uses
``paddle.grad``, and that step keeps its activations to the end. ``create_graph`` is never
asked for: the transforms return detached gradients.

NOTE [ Reading the graph ]: in Paddle 3.3, reading a non-leaf's ``grad_fn`` keeps its whole graph
alive for good unless a backward runs on that graph itself (``paddle.grad``, which runs on a
copy, does not free it). So what can be told without reading the graph is told first: a
parameter of the differentiated Cell, or a tensor argument, that records gradients and is not
requested sends the transform to ``paddle.grad`` before ``grad_fn`` is read. The graph is
read only when nothing else is known to stand in the way; when the reading still finds a
reason (a leaf outside the Cell and its arguments, such as a closure's Parameter, or a part of
the graph that leads only to a private copy), that step's graph is not freed (measured: its
activations stay allocated).

A hook registered with Paddle's own ``Tensor.register_hook`` on a requested leaf runs under
this backward (Paddle skips a leaf's hook under ``paddle.grad``); MindSpore's hooks are
registered by the layer, which never hands a leaf's hook to Paddle (``_grad_hooks.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import paddle

from ._paddle_members import paddle_member

__all__ = ["lean_gradients"]

_ACCUMULATION = "GradNodeAccumulation"  # the grad node of a leaf that records gradients


def lean_gradients(outs: Sequence[paddle.Tensor], seeds: Sequence[paddle.Tensor],
                   requested: Sequence[paddle.Tensor], private: Sequence[paddle.Tensor] = (),
                   others: Sequence[Any] = ()) -> list | None:
    """The gradient of each of ``requested`` (distinct tensors that record gradients) from a
    backward of ``outs`` seeded with ``seeds``, None where none reaches it; or None (nothing
    run) when ``paddle.grad`` must be used instead (NOTE [ A lean backward ]). ``others``:
    tensors the function may reach that the transform does not differentiate (its Cell's
    parameters, its tensor arguments)."""
    if len({id(t) for t in outs}) != len(outs) or not all(r.is_leaf for r in requested):
        return None
    if _untouchable(others, requested, private):
        return None  # decided before the graph is read (NOTE [ Reading the graph ])
    nodes = {r.grad_fn.node_ptr(): r for r in requested}
    own = [p for p in private
           if isinstance(p, paddle.Tensor) and p.is_leaf and not p.stop_gradient and p.grad_fn is not None]
    reached = _reached_leaves(outs, set(nodes))
    if reached is None or not reached <= nodes.keys() | {p.grad_fn.node_ptr() for p in own}:
        return None
    set_aside = {ptr: _set_aside(r) for ptr, r in nodes.items()}
    found: dict[int, paddle.Tensor | None] = {}
    try:
        paddle.autograd.backward(list(outs), list(seeds))
        for ptr, r in nodes.items():
            found[ptr] = _own_buffer(r.grad) if ptr in reached and r.grad is not None else None
    finally:
        for p in own:
            _clear(p)
        for ptr, r in nodes.items():
            _clear(r)
            if set_aside[ptr] is not None:
                r.grad = set_aside[ptr]
    return [found[ptr] for ptr in nodes]


def _untouchable(others: Sequence[Any], requested: Sequence[paddle.Tensor],
                 private: Sequence[paddle.Tensor]) -> bool:
    """Whether one of ``others`` is a leaf recording gradients that is neither requested nor private."""
    mine = {id(t) for t in requested} | {id(t) for t in private}
    return any(isinstance(t, paddle.Tensor) and t.is_leaf and not t.stop_gradient and id(t) not in mine
               for t in others)


def _reached_leaves(outs: Sequence[paddle.Tensor], requested: set[int]) -> set[int] | None:
    """The accumulation nodes (leaves) reachable from ``outs``' grad nodes; None when another
    node reached leads to no requested leaf (``paddle.grad`` would not run it, nor the hooks
    on its outputs)."""
    stack = [t.grad_fn for t in outs]
    parents: dict[int, list[int]] = {}  # every node reached -> the nodes it was reached from
    seen: set[int] = set()
    leaves: set[int] = set()
    while stack:
        node = stack.pop()
        ptr = node.node_ptr()
        if ptr in seen:
            continue
        seen.add(ptr)
        parents.setdefault(ptr, [])
        if node.name() == _ACCUMULATION:
            leaves.add(ptr)
            continue
        for child in node.next_functions:
            if child is not None:
                parents.setdefault(child.node_ptr(), []).append(ptr)
                stack.append(child)
    useful: set[int] = set()
    frontier = [ptr for ptr in leaves if ptr in requested]
    while frontier:
        ptr = frontier.pop()
        if ptr not in useful:
            useful.add(ptr)
            frontier.extend(parents[ptr])
    return leaves if seen <= useful | leaves else None


def _own_buffer(t: paddle.Tensor) -> paddle.Tensor:
    """A tensor over ``t``'s memory that outlives ``t`` being cleared (a copy if empty)."""
    with paddle.no_grad():
        if t.size:
            return paddle_member(paddle.Tensor, "view")(t, t.shape)
        return t.clone()


def _set_aside(leaf: paddle.Tensor) -> paddle.Tensor | None:
    """The leaf's ``.grad`` (None if it has none), kept apart; the leaf's is cleared."""
    if leaf.grad is None:
        return None
    kept = _own_buffer(leaf.grad)
    _clear(leaf)
    return kept


def _clear(leaf: paddle.Tensor) -> None:
    paddle_member(paddle.Tensor, "clear_gradient")(leaf, False)
