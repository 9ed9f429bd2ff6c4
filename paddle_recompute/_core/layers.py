"""The layers a recomputed function runs (found by ``roots.py``; their state is watched by
``written.py``): walking them, their parameters, and the types declared stateful by the user."""

from __future__ import annotations

import functools

import paddle
from paddle import nn

from .identity import ALIAS_OF
from .roots import find_roots

__all__ = [
    "find_roots", "register_stateful_layer", "walk", "layer_call_params", "ParamAliases",
]

_STATEFUL: list[type] = []


def register_stateful_layer(cls: type) -> type:
    """Declare a Layer type whose forward writes state in ways no in-place version shows.

    What a forward writes to its layers' buffers, no-gradient parameters and attributes
    (in place or by reassignment) is seen without this and put back as it was before the
    forward for the rerun.  A registered type's buffers and no-gradient parameters are
    copied at every forward start and all restored, so writes the versions miss
    (``Tensor.set_value``) are undone too.  Usable as a class decorator.

    Raises:
        TypeError: ``cls`` is not a ``paddle.nn.Layer`` subclass.
    """
    if not (isinstance(cls, type) and issubclass(cls, nn.Layer)):
        raise TypeError(f"register_stateful_layer: expected a paddle.nn.Layer subclass, got {cls!r}")
    if cls not in _STATEFUL:
        _STATEFUL.append(cls)
    return cls


def walk(roots) -> list:
    """``roots`` and all their sublayers, once each (reads the dicts directly: this runs per
    call, and ``Layer.sublayers()`` costs several times more).  A recompute call walks once
    and shares the list (``ForwardState.layers``)."""
    out = []
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        layer = stack.pop()
        if id(layer) in seen:
            continue
        seen.add(id(layer))
        out.append(layer)
        stack.extend(sub for sub in layer._sub_layers.values() if sub is not None)
    return out


def layer_call_params(function, layers: list) -> tuple | None:
    """Trainable parameters of a Layer call, or None when ``function`` is opaque.

    A call is a Layer call when ``function`` is a Layer, a bound method of one, or a
    partial or chain of those: then every parameter it can touch is in ``layers`` (the
    :func:`walk` of the call's roots).
    """
    if not layers or not _is_layer_call(function):
        return None
    seen: set[int] = set()
    params = []
    for layer in layers:
        for p in layer._parameters.values():
            if p is not None and not p.stop_gradient and id(p) not in seen:
                seen.add(id(p))
                params.append(p)
    return tuple(params)


def _is_layer_call(function) -> bool:
    if isinstance(function, nn.Layer):
        return True
    if isinstance(function, functools.partial):
        return _is_layer_call(function.func)
    chained = getattr(function, "_recompute_roots", None)
    if chained is not None:
        return all(_is_layer_call(f) for f in chained)
    return isinstance(getattr(function, "__self__", None), nn.Layer)


def _carry_attributes(alias, p) -> None:
    """What Python reads on a parameter, read on its alias alike: its attributes
    (``is_distributed``, ``need_clip``, ``optimize_attr``, ``sequence_parallel``,
    ``main_grad``, a user's own), ``name``, ``trainable``, and the parameter itself for a ``PyLayer``
    that saves the alias (NOTE [ Saved leaves ] in ``identity.py``; nested regions: the
    outermost).  Writes stay on the alias; a ``PyLayer``'s backward writes on the parameter."""
    alias.name = p.name
    attributes = alias.__dict__
    attributes.update(p.__dict__)
    attributes["trainable"] = not p.stop_gradient
    attributes[ALIAS_OF] = p.__dict__.get(ALIAS_OF, p)


class ParamAliases:
    """Context manager: ``layers`` see detached leaves instead of ``params``.

    The recomputation then accumulates each parameter's gradient into its alias, not into
    ``.grad``, so the reentrant backward can hand it to Paddle's engine as a PyLayer input
    gradient (see NOTE [ Reentrant inputs ]).  Aliases share the parameters' memory.
    """

    __slots__ = ("layers", "params", "aliases", "swapped")

    def __init__(self, layers: list, params: tuple):
        self.layers = layers
        self.params = params
        self.aliases: dict[int, paddle.Tensor] = {}
        self.swapped: list = []

    def __enter__(self) -> ParamAliases:
        wanted = {id(p) for p in self.params}
        for layer in self.layers:
            table = layer._parameters
            for name, p in table.items():
                if p is not None and id(p) in wanted:
                    table[name] = self._alias(p)
                    self.swapped.append((table, name, p))
        return self

    def _alias(self, p) -> paddle.Tensor:
        alias = self.aliases.get(id(p))
        if alias is None:
            alias = p.detach()
            alias.stop_gradient = False
            _carry_attributes(alias, p)
            self.aliases[id(p)] = alias
        return alias

    def __exit__(self, *exc: object) -> None:
        for table, name, p in self.swapped:
            table[name] = p
        self.swapped.clear()

    def grads(self) -> list:
        """Gradient accumulated in each parameter's alias (None where unused)."""
        out = []
        for p in self.params:
            alias = self.aliases.get(id(p))
            out.append(None if alias is None else alias.grad)
        return out
