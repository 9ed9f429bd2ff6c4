"""Calls alike: what two calls of layers must share for one's measured costs to stand for
the other's (NOTE [ Alike calls ]).

NOTE [ Alike calls ]: a model of ``n`` decoder layers runs ``n`` calls that cost the same:
one class, parameters of the same shapes and dtypes, inputs of the same shapes and dtypes.
Timing each of them (the profile's forwards and reruns, every option's forward and
backward) makes the plan's cost grow with depth for no new information.  So calls alike
share one measurement.  The profile's first forward runs every call: it counts every
call's saved bytes (never shared), finds the structure, times every call once, reruns the
first call of each kind (the others take its rerun time) and captures the inputs of the
first block of each kind.  Its later forwards (``repeats``) time one block of each kind:
a block called once whose first alike ran before it is not run, its output from the first
forward (detached, a fresh leaf where it took a gradient) stands in for it, and its
enclosing calls count its first alike's time this run in its place (``profile/measure.py``).
Every block with a stand-in, its layers and their calls then take its first alike's
times (medians over the forwards).  Unless a layer runs in two blocks, or in a block and
outside every block: a stand-in would then change that layer's calls, and every block
runs in every forward.  So at any depth a profile runs the model's whole forward once and
one block of each kind ``repeats`` times.  Blocks alike also share the operator recording
and the measured options of their first, measured alone on the captured inputs
(``options/alike.py``).

Two calls are alike when their layers are of one class, both in training or both in eval
mode, with the same sublayers (relative names, classes, modes), parameters and buffers
(relative names, shapes, dtypes, whether they take gradients), and their arguments have the
same nesting, tensors of the same shapes, dtypes and ``stop_gradient``, and equal plain
values (ints, floats, strings, ``None``).  A call with an argument of any other kind (an
object that may steer the forward) is alike to none.  What a forward reads from its layer's
plain attributes is not compared: a layer whose forward branches on its index would be
measured as its first alike (times only; what it saves is still counted).  A stand-in has
the shapes and dtypes of the output it stands for, not its values after the first
forward: the later forwards time the code after it on the first forward's values.
"""

from __future__ import annotations

from typing import Any

import paddle

from ..._core import tree
from .counter import layer_of

__all__ = ["call_key", "capture", "detached", "stand_ins_of", "share_times"]

_PLAIN = (int, float, bool, str, type(None))
_Tensor = paddle.Tensor


class _Unlike(Exception):
    """An argument that makes a call alike to none."""


def call_key(layer: paddle.nn.Layer, args: tuple, kwargs: dict) -> tuple | None:
    """A hashable key equal for calls alike (NOTE [ Alike calls ]); ``None``: alike to none."""
    try:
        inputs = (_value(args), _value(kwargs))
    except _Unlike:
        return None
    return (type(layer), layer.training, _layer_key(layer), inputs)


def _layer_key(layer: paddle.nn.Layer) -> tuple:
    subs = tuple((name, type(sub), sub.training) for name, sub in layer.named_sublayers())
    params = tuple((name, tuple(p.shape), str(p.dtype), p.stop_gradient)
                   for name, p in layer.named_parameters())
    buffers = tuple((name, tuple(b.shape), str(b.dtype)) for name, b in layer.named_buffers()
                    if b is not None)
    return subs, params, buffers


def _value(node: Any) -> Any:
    if isinstance(node, _Tensor):
        return ("t", tuple(node.shape), str(node.dtype), node.stop_gradient)
    if isinstance(node, _PLAIN):
        return ("v", type(node), node)
    if isinstance(node, (tuple, list)):
        return (type(node), tuple(_value(v) for v in node))
    if isinstance(node, dict):
        return (type(node), tuple((k, _value(v)) for k, v in node.items()))
    raise _Unlike(type(node).__name__)


def detached(call: Any) -> Any:
    """``call`` (nested tensors) with each tensor that takes a gradient as a fresh leaf that
    does, so a later forward on it builds its own graph and keeps no earlier one alive."""
    leaves, spec = tree.flatten(call)
    out = []
    for t in leaves:
        if not t.stop_gradient:
            t = t.detach()
            t.stop_gradient = False
        out.append(t)
    return tree.unflatten(spec, out)


def capture(call: tuple, captured: dict, key: tuple | None) -> tuple | None:
    """A block's ``(args, kwargs)`` to measure it alone on, when no block captured before
    (``captured``: block -> (key, call)) is of its ``key``; else None."""
    if key is not None and any(k == key for k, _ in captured.values()):
        return None
    return detached(call)


def stand_ins_of(inst, layers: dict, blocks: list) -> dict:
    """Block call -> (its first alike's call, its output, detached) for the blocks called
    once, from the counting run ``inst`` (``profile/measure.py``'s ``_Instrumented``); none
    when a layer is shared by blocks, or by a block and the code outside them (a skipped
    block would change its calls)."""
    if not _own_sublayers(layers, blocks):
        return {}
    firsts: dict = {}
    out = {}
    for call, (key, output) in inst.block_outs.items():
        if key is None or inst.counts[layer_of(call)] != 0:
            continue
        first = firsts.setdefault(key, call)
        if first != call:
            out[call] = (first, detached(output))
    return out


def share_times(prof, stand_ins: dict) -> None:
    """Give each block with a stand-in, its layers and its calls their first alike's times."""
    for call, (first, _) in stand_ins.items():
        block, alike = layer_of(call), layer_of(first)
        for name, row in prof.layers.items():
            rel = _relative(name, block)
            source = None if rel is None else prof.layers.get(alike + rel)
            if source is not None:
                row.forward_s, row.recompute_s = source.forward_s, source.recompute_s
        for row in prof.calls.values():
            rel = _relative(row.layer, block)
            name = None if rel is None else alike + rel
            source = None if rel is None else prof.calls.get(f"{name}@{row.index}" if row.index else name)
            if source is not None:
                row.forward_s, row.recompute_s = source.forward_s, source.recompute_s


def _relative(name: str, block: str) -> str | None:
    if name == block:
        return ""
    return name[len(block):] if name.startswith(block + ".") else None


def _own_sublayers(layers: dict, blocks: list) -> bool:
    """Whether no layer runs in two blocks, or in a block and outside every block."""
    owner: dict = {}
    for b in blocks:
        for sub in layers[b].sublayers(include_self=True):
            if owner.setdefault(id(sub), b) != b:
                return False
    def inside(name):
        return any(b == "" or name == b or name.startswith(b + ".") for b in blocks)
    return not any(id(layer) in owner for name, layer in layers.items() if not inside(name))
