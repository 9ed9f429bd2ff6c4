"""MindSpore's ``.recompute()`` on plain ``paddle.nn.Layer`` objects, opt-in and undoable.

For code already ported to ``paddle.nn.Layer`` that still calls ``block.recompute()``. Nothing
here runs at import: Paddle is unchanged until one of these is called.

- per layer: :func:`enable_layer_recompute` swaps one instance's class for a subclass that
  adds :class:`~paddle_mindspore._cell.RecomputeMixin`;
  :func:`disable_layer_recompute` puts the original class back.
- process-wide: :func:`install_layer_recompute` adds a ``recompute`` method to
  ``paddle.nn.Layer`` (calling it opts that one layer in, as above);
  :func:`uninstall_layer_recompute` removes the method and turns every layer it opted in back
  into a plain layer.

Why a class swap and not a patched ``paddle.nn.Layer.__call__``: only the layers that ask pay
for the extra call, and ``isinstance`` against the original class still holds.  Why not
``route_forward`` (``_entry/routing.py``, how the rest of the package routes a layer through
recompute): MindSpore's region is the whole call, forward hooks included, and its options
(``output_recompute``) are read at each call, so ``.recompute()`` after opt-in takes effect.
"""

from __future__ import annotations

import weakref
from typing import Any

import paddle

from ._cell import RecomputeMixin, parse_recompute_options, recompute_signature

__all__ = [
    "enable_layer_recompute", "disable_layer_recompute", "install_layer_recompute",
    "uninstall_layer_recompute", "layer_recompute_installed",
]

_MIXED: dict[type, type] = {}  # original class -> its RecomputeMixin subclass
_ORIGINAL: dict[type, type] = {}  # the reverse
_OPTED_IN: weakref.WeakSet = weakref.WeakSet()  # layers opted in through the installed method


def _check_layer(api: str, layer: Any) -> None:
    if not isinstance(layer, paddle.nn.Layer):
        raise TypeError(f"{api}: expected a paddle.nn.Layer, got {type(layer).__name__}")


def enable_layer_recompute(layer: paddle.nn.Layer) -> paddle.nn.Layer:
    """Give one Paddle Layer MindSpore's ``.recompute()`` (opt-in; Paddle itself is unchanged).

    The layer's class is swapped for a subclass that adds ``RecomputeMixin``, so only this
    instance changes; ``isinstance`` checks against its original class still hold.

    Returns:
        ``layer``, now with ``layer.recompute(...)``.

    Raises:
        TypeError: ``layer`` is not a ``paddle.nn.Layer``.

    Example:
        >>> import paddle
        >>> from paddle_mindspore import enable_layer_recompute
        >>> block = enable_layer_recompute(paddle.nn.Linear(4, 4))
        >>> block.recompute()
    """
    _check_layer("enable_layer_recompute", layer)
    cls = type(layer)
    if not issubclass(cls, RecomputeMixin):
        mixed = _MIXED.get(cls)
        if mixed is None:
            mixed = type(cls.__name__, (RecomputeMixin, cls),
                         {"__module__": cls.__module__, "__qualname__": cls.__qualname__})
            _MIXED[cls], _ORIGINAL[mixed] = mixed, cls
        layer.__class__ = mixed
    return layer


def disable_layer_recompute(layer: paddle.nn.Layer) -> paddle.nn.Layer:
    """Undo :func:`enable_layer_recompute`: the layer is plain again (no ``.recompute()``).

    A ``Cell`` or a class that mixes in ``RecomputeMixin`` itself keeps its method; its calls
    stop being recompute regions.

    Returns:
        ``layer``.

    Raises:
        TypeError: ``layer`` is not a ``paddle.nn.Layer``.

    Example:
        >>> import paddle
        >>> from paddle_mindspore import disable_layer_recompute, enable_layer_recompute
        >>> block = enable_layer_recompute(paddle.nn.Linear(4, 4))
        >>> block.recompute()
        >>> block = disable_layer_recompute(block)
        >>> hasattr(block, "recompute")
        False
    """
    _check_layer("disable_layer_recompute", layer)
    layer.__dict__.pop("_ms_recompute", None)
    original = _ORIGINAL.get(type(layer))
    if original is not None:
        layer.__class__ = original
    elif isinstance(layer, RecomputeMixin):
        layer._ms_recompute = None
    _OPTED_IN.discard(layer)
    return layer


def _layer_recompute(self: paddle.nn.Layer, *args: Any, **kwargs: Any) -> None:
    """``paddle.nn.Layer.recompute(*, use_reentrant=True, output_recompute=False, early_stop=True,
    context_fn=None, **kwargs)`` while :func:`install_layer_recompute` is in effect.

    Same meaning and errors as ``mindspore.nn.Cell.recompute``; opts this layer in.
    """
    config = parse_recompute_options(args, kwargs)  # invalid options leave the layer untouched
    enable_layer_recompute(self)
    self._ms_recompute = config
    _OPTED_IN.add(self)


_layer_recompute.__signature__ = recompute_signature()  # type: ignore[attr-defined]


def layer_recompute_installed() -> bool:
    """Whether ``paddle.nn.Layer.recompute`` is this layer's (see :func:`install_layer_recompute`)."""
    return paddle.nn.Layer.__dict__.get("recompute") is _layer_recompute


def install_layer_recompute() -> None:
    """Add MindSpore's ``.recompute()`` to every ``paddle.nn.Layer`` (process-wide, opt-in).

    Calling ``layer.recompute(...)`` then makes that layer's later calls recompute regions,
    exactly like ``Cell.recompute``. Idempotent; :func:`uninstall_layer_recompute` undoes it.

    Raises:
        RuntimeError: ``paddle.nn.Layer`` already has a ``recompute`` attribute of its own.

    Example:
        >>> import paddle
        >>> from paddle_mindspore import install_layer_recompute, uninstall_layer_recompute
        >>> install_layer_recompute()
        >>> paddle.nn.Linear(4, 4).recompute()
        >>> uninstall_layer_recompute()
    """
    if layer_recompute_installed():
        return
    if hasattr(paddle.nn.Layer, "recompute"):
        raise RuntimeError("install_layer_recompute: paddle.nn.Layer already has a 'recompute' "
                           "attribute; refusing to replace it. Use enable_layer_recompute(layer) "
                           "per layer instead.")
    paddle.nn.Layer.recompute = _layer_recompute


def uninstall_layer_recompute() -> None:
    """Undo :func:`install_layer_recompute`: the method goes, and every layer it opted in is plain
    again. A no-op when not installed."""
    if layer_recompute_installed():
        del paddle.nn.Layer.recompute
    for layer in list(_OPTED_IN):
        disable_layer_recompute(layer)
