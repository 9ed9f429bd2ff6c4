"""Replace a Layer's ``forward`` on one instance, and put it back.

NOTE [ Instance forwards ]: presets, plans, the profiler, calibration and the testing kit
swap ``forward`` on a layer instance, all through ``route_forward`` (``_entry/routing.py``).
The swap writes the instance attribute with ``object.__setattr__``, never
``layer.forward = f``, because a model class may override ``__setattr__``.  PaddleFormers
does: ``PretrainedModel.__setattr__`` (and, once ``paddleformers`` is imported,
``paddle.nn.TransformerEncoder``'s and ``TransformerEncoderLayer``'s) passes the value
through ``adapt_stale_fwd_patch``, which wraps a plain function whose signature lacks
``output_attentions``, ``output_hidden_states`` or ``return_dict`` as
``value(self, *args, **kwargs)``: the layer is passed twice and ``LlamaModel.forward``
received the input ids as ``attention_mask``.  Paddle's own ``Layer.__setattr__`` stores a
function as a plain attribute, so bypassing it changes nothing else.
"""

from __future__ import annotations

from collections.abc import Callable

from paddle import nn

__all__ = ["swap_forward", "restore_forward"]


def swap_forward(layer: nn.Layer, forward: Callable) -> Callable | None:
    """Make ``forward`` the forward of ``layer``; returns the instance forward it replaced
    (``None`` when the class's was in use), for :func:`restore_forward`."""
    previous = layer.__dict__.get("forward")
    object.__setattr__(layer, "forward", forward)
    return previous


def restore_forward(layer: nn.Layer, previous: Callable | None) -> None:
    """Undo :func:`swap_forward`: ``previous`` again, or the class's forward for ``None``."""
    if previous is None:
        if "forward" in layer.__dict__:
            object.__delattr__(layer, "forward")
    else:
        object.__setattr__(layer, "forward", previous)
