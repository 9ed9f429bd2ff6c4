"""Transformer presets: PaddleNLP's ``recompute_granularity`` for blocks of standard layers.

* ``"full"``: the whole block is a recompute region (only its input is kept).
* ``"full_attn"``: the attention sublayer is a region; the MLP keeps its activations.
* ``"core_attn"``: the attention sublayer is a selective region with
  ``policies.save_all_but_attention_core``: only scores, softmax, dropout and scores·V
  are recomputed (Megatron-LM's selective recompute); projections are kept and skipped.
* ``"selective"`` (ours, not PaddleNLP's): the whole block is a selective region with
  ``policies.save_matmuls_except_scores_and_masks``:
  projections, scores·V and dropout masks are kept; norms, activations, the attention
  scores, softmax and dropout outputs (rebuilt from their masks) are recomputed.  The
  least recompute per byte freed of the presets (on the CPU GPT benchmark: 0.47x the
  activations for about 1.05x the step time).
* ``"none"``: undo a preset (the block's own ``forward`` again); the same as ``remove()`` on
  the handle the preset returned.

Paddle's fused kernels are answered by kind (``policies.FUSED_OPS``): ``"core_attn"``
recomputes the fused attention kernels (``flash_attn``, ``flashmask_attention``...), the
fused masked softmax and RoPE, and keeps fused norms, ``swiglu`` and ``fused_gemm_epilogue``;
``"selective"`` keeps the fused attention kernels (their output is scores·V) and
``fused_gemm_epilogue``, and recomputes fused norms, ``swiglu``, the masked softmax and RoPE.

The block's (or sublayer's) ``forward`` is replaced on the instance, so parameter names,
``state_dict`` keys and hooks registered on the layer are unchanged.
"""

from __future__ import annotations

from paddle import nn

from .._selective import policies
from .routing import Applied, route_forward

__all__ = ["apply_recompute_granularity", "GRANULARITIES"]

GRANULARITIES = ("full", "full_attn", "core_attn", "selective", "none")
_ATTENTION_NAMES = ("self_attn", "attn", "attention", "self_attention")
_HANDLE = "_paddle_recompute_preset"  # the preset's Applied, on the block it was applied to


def apply_recompute_granularity(
    block: nn.Layer, granularity: str, *, attention: str | None = None, **options
) -> Applied:
    """Make ``block`` recompute at ``granularity`` (non-reentrant); returns the undo handle.

    Args:
        block: a transformer block, e.g. ``paddle.nn.TransformerEncoderLayer`` or any layer
            with an attention sublayer.
        granularity: ``"full"``, ``"full_attn"``, ``"core_attn"``, ``"selective"``, or
            ``"none"`` to undo.
        attention: name of the attention sublayer; by default the first child that is a
            ``paddle.nn.MultiHeadAttention``, else one named ``self_attn``, ``attn``,
            ``attention`` or ``self_attention``.
        **options: further ``recompute`` options (``preserve_rng_state``, ``early_stop``...).

    Returns:
        A :class:`~paddle_recompute.planner.Applied` handle: ``remove()`` (or leaving its
        ``with`` block) undoes the preset, as ``granularity="none"`` does.  ``block`` is
        changed in place; a preset applied again replaces the one before it.

    Raises:
        TypeError: ``block`` is not a ``paddle.nn.Layer``.
        ValueError: unknown ``granularity``, no attention sublayer found, or ``options``
            that conflict with the preset (``use_reentrant``, ``policy``).

    Example:
        >>> import paddle, paddle_recompute as pr
        >>> layer = paddle.nn.TransformerEncoderLayer(16, 2, 32)
        >>> handle = pr.apply_recompute_granularity(layer, "core_attn")
        >>> x = paddle.randn([2, 5, 16]); x.stop_gradient = False
        >>> layer(x).sum().backward()
        >>> handle.remove()
    """
    if not isinstance(block, nn.Layer):
        raise TypeError(f"apply_recompute_granularity: `block` must be a paddle.nn.Layer, "
                        f"got {type(block).__name__}")
    if granularity not in GRANULARITIES:
        raise ValueError(f"apply_recompute_granularity: `granularity` must be one of "
                         f"{GRANULARITIES}, got {granularity!r}")
    for name in ("use_reentrant", "policy"):
        if name in options:
            raise ValueError(f"apply_recompute_granularity: `{name}` is set by the preset "
                             f"(non-reentrant; a policy for 'core_attn' and 'selective'); leave it out")
    _restore(block)
    if granularity == "none":
        for child in block.sublayers():
            _restore(child)
        return Applied()
    if granularity == "full":
        return _wrap(block, block, options)
    if granularity == "selective":
        return _wrap(block, block, {**options, "policy": policies.save_matmuls_except_scores_and_masks})
    attn = _find_attention(block, attention)
    _restore(attn)
    if granularity == "core_attn":
        options = {**options, "policy": policies.save_all_but_attention_core}
    return _wrap(block, attn, options)


def _find_attention(block: nn.Layer, name: str | None) -> nn.Layer:
    children = dict(block.named_children())
    if name is not None:
        if name not in children:
            raise ValueError(f"apply_recompute_granularity: `block` has no sublayer {name!r}; "
                             f"its sublayers are {sorted(children)}")
        return children[name]
    for child in children.values():
        if isinstance(child, nn.MultiHeadAttention):
            return child
    for candidate in _ATTENTION_NAMES:
        if candidate in children:
            return children[candidate]
    raise ValueError(
        f"apply_recompute_granularity: found no attention sublayer in {type(block).__name__} "
        f"(no paddle.nn.MultiHeadAttention child, none named {_ATTENTION_NAMES}); its sublayers "
        f"are {sorted(children)}: pass attention='<name>'"
    )


def _wrap(block: nn.Layer, layer: nn.Layer, options: dict) -> Applied:
    handle = Applied([route_forward(layer, use_reentrant=False, **options)])
    object.__setattr__(block, _HANDLE, handle)
    return handle


def _restore(layer: nn.Layer) -> None:
    handle = vars(layer).get(_HANDLE)
    if handle is not None:
        handle.remove()
        object.__delattr__(layer, _HANDLE)
