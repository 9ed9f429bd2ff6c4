"""Calls alike: what two calls of layers must share for one's measured costs to stand for
the other's (NOTE [ Alike calls ]).

NOTE [ Alike calls ]: a model of ``n`` decoder layers runs ``n`` calls that cost the same:
one class, parameters of the same shapes and dtypes, inputs of the same shapes and dtypes.
Timing each of them (the profile's reruns, every option's forward and backward) makes the
plan's cost grow with depth for no new information.  So calls alike share one measurement:
the first call of a kind is measured and the others take its seconds (the profile's rerun
times: ``profile/measure.py``), and blocks alike share the operator recording and the
measured options of their first (``options/alike.py``).  Bytes are never shared: every
call's saved tensors are counted as it runs.

Two calls are alike when their layers are of one class, both in training or both in eval
mode, with the same sublayers (relative names, classes, modes), parameters and buffers
(relative names, shapes, dtypes, whether they take gradients), and their arguments have the
same nesting, tensors of the same shapes, dtypes and ``stop_gradient``, and equal plain
values (ints, floats, strings, ``None``).  A call with an argument of any other kind (an
object that may steer the forward) is alike to none.  What a forward reads from its layer's
plain attributes is not compared: a layer whose forward branches on its index would be
measured as its first alike (times only; what it saves is still counted).
"""

from __future__ import annotations

from typing import Any

import paddle

__all__ = ["call_key"]

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
