"""Flatten nested call arguments into tensor leaves and a spec to rebuild them.

Tuples, lists and dicts are descended into, and so are dict subclasses (``OrderedDict``,
PaddleFormers' ``ModelOutput``: what Hugging Face-style models return) and named tuples,
which are rebuilt as their own type; every other value is kept as-is.  The spec is plain
Python, so rebuilding costs one pass over the structure.
"""

from __future__ import annotations

from typing import Any

import paddle

__all__ = ["flatten", "tensors", "unflatten", "flatten_call", "unflatten_call", "map_tensors", "leaf_path"]

_Tensor = paddle.Tensor
# Spec nodes: ("t", i) tensor leaf i; ("v", value) constant; (type, children) container;
# ("d", type, keys, children) dict-like.
_LEAF_T = "t"
_CONST = "v"
_DICT = "d"
_MAPPING = "m"  # ("m", type, keys, children): a dict subclass
_NAMED = "n"  # ("n", type, children): a named tuple


_ONE = (_LEAF_T, 0)  # spec of a lone tensor: most operators return one


def flatten(tree: Any) -> tuple[list[paddle.Tensor], Any]:
    """Return (tensor leaves in order, spec)."""
    if isinstance(tree, _Tensor):
        return [tree], _ONE
    leaves: list[paddle.Tensor] = []
    return leaves, _flatten(tree, leaves)


def tensors(tree: Any) -> list[paddle.Tensor]:
    """The tensor leaves of ``tree`` in :func:`flatten`'s order, without its spec: what an
    observed operator's inputs need, once per call (its shape lists are walked, not copied)."""
    leaves: list[paddle.Tensor] = []
    _collect(tree, leaves)
    return leaves


_PLAIN = (int, float, bool, str, type(None))  # values that hold no tensor: not descended into


def _collect(node: Any, leaves: list) -> None:
    if isinstance(node, _Tensor):
        leaves.append(node)
        return
    cls = type(node)
    if cls is tuple or cls is list or (isinstance(node, tuple) and hasattr(cls, "_fields")):
        for child in node:
            if isinstance(child, _Tensor):
                leaves.append(child)
            elif not isinstance(child, _PLAIN):
                _collect(child, leaves)
    elif isinstance(node, dict):
        for key in list(node):
            _collect(node[key], leaves)


def _flatten(node: Any, leaves: list) -> Any:
    if isinstance(node, _Tensor):
        leaves.append(node)
        return (_LEAF_T, len(leaves) - 1)
    cls = type(node)
    if cls is tuple or cls is list:
        return (cls, [_flatten(child, leaves) for child in node])
    if cls is dict:
        keys = list(node)
        return (_DICT, cls, keys, [_flatten(node[k], leaves) for k in keys])
    if isinstance(node, dict):
        keys = list(node)
        return (_MAPPING, cls, keys, [_flatten(node[k], leaves) for k in keys])
    if isinstance(node, tuple) and hasattr(cls, "_fields"):
        return (_NAMED, cls, [_flatten(child, leaves) for child in node])
    return (_CONST, node)


# Spec of a call whose arguments are all positional tensors: the common case, rebuilt
# without walking a spec (recompute flattens and rebuilds the arguments once per call).
_FLAT_CALL = ("flat-call",)


def flatten_call(args: tuple, kwargs: dict) -> tuple[list[paddle.Tensor], Any]:
    """``flatten((args, kwargs))``, with a shortcut when every argument is a positional tensor."""
    if not kwargs:
        for arg in args:
            if not isinstance(arg, _Tensor):
                break
        else:
            return list(args), _FLAT_CALL
    return flatten((args, kwargs))


def unflatten_call(spec: Any, leaves: list | tuple) -> tuple[tuple, dict]:
    """Inverse of :func:`flatten_call`: ``(args, kwargs)``."""
    if spec is _FLAT_CALL:
        return tuple(leaves), {}
    return unflatten(spec, leaves)


def unflatten(spec: Any, leaves: list | tuple) -> Any:
    """Rebuild the structure described by ``spec`` with ``leaves`` as its tensors."""
    tag = spec[0]
    if tag == _LEAF_T:
        return leaves[spec[1]]
    if tag == _CONST:
        return spec[1]
    if tag == _DICT:
        return spec[1](zip(spec[2], (unflatten(c, leaves) for c in spec[3]), strict=True))
    if tag == _MAPPING:
        return _mapping(spec[1], spec[2], [unflatten(c, leaves) for c in spec[3]])
    if tag == _NAMED:
        return spec[1]._make(unflatten(c, leaves) for c in spec[2])
    return tag(unflatten(c, leaves) for c in spec[1])


def _mapping(cls: type, keys: list, values: list):
    """A ``cls`` holding ``keys`` -> ``values``: by keywords (``ModelOutput``'s dataclass
    fields, ``OrderedDict``), else from pairs."""
    if all(isinstance(k, str) for k in keys):
        try:
            return cls(**dict(zip(keys, values, strict=True)))
        except TypeError:
            pass
    return cls(zip(keys, values, strict=True))


def map_tensors(fn, tree: Any) -> Any:
    """Apply ``fn`` to every tensor inside ``tree``; returns the same structure."""
    leaves, spec = flatten(tree)
    if not leaves:
        return tree
    return unflatten(spec, [fn(t) for t in leaves])


def leaf_path(spec: Any, index: int) -> str:
    """Where tensor leaf ``index`` of a :func:`flatten_call` spec sits: ``args[1]``,
    ``kwargs['mask']``, ``args[0][2]`` (for error messages)."""
    if spec is _FLAT_CALL:
        return f"args[{index}]"
    path = _path(spec, index)
    if path is None:
        return f"tensor argument {index}"
    head, *rest = path
    return ("args" if head == 0 else "kwargs") + "".join(f"[{p!r}]" for p in rest)


def _path(spec: Any, index: int) -> list | None:
    tag = spec[0]
    if tag == _LEAF_T:
        return [] if spec[1] == index else None
    if tag == _CONST:
        return None
    if tag in (_DICT, _MAPPING):
        keys, children = spec[2], spec[3]
    elif tag == _NAMED:
        keys, children = range(len(spec[2])), spec[2]
    else:
        keys, children = range(len(spec[1])), spec[1]
    for key, child in zip(keys, children, strict=True):
        found = _path(child, index)
        if found is not None:
            return [key, *found]
    return None
