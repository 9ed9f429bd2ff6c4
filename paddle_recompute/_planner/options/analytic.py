"""``transformer_layer_bytes``: the activation bytes one transformer layer saves for
backward, from its sizes alone (no model, no profile).

NOTE [ Analytic layer bytes ]: Korthikanti et al. 2022 ("Reducing Activation Recomputation
in Large Transformer Models", section 4.1) count what a GPT layer saves with 16-bit
activations, 1-byte dropout masks and no tensor parallelism as ``s*b*h*(34 + 5*a*s/h)``
bytes (``s`` sequence, ``b`` batch, ``h`` hidden, ``a`` heads).  Term by term, in
elements of the activation dtype per token: attention saves its QKV input (``h``), Q and K
(``h + h_kv``), V (``h_kv``), the softmax output (``a*s``) and the output projection's
input (``h``); the MLP its input (``h``) and, for GeLU, the activation's input and the
second linear's input (``2*i``, ``i`` = intermediate size); the two norms their inputs
(``2*h``); with dropout, the masks (1 byte: ``a*s`` after softmax, ``h`` after attention
and after the MLP) and the dropped softmax (``a*s`` elements).  With ``h_kv = h``,
``i = 4h``, GeLU, dropout and 2 bytes this is exactly the paper's formula
(``tests/planner/test_analytic.py``).  The same count generalises: ``element_bytes=4``
(float32), grouped-query attention (``kv_heads``), a gated MLP (``mlp="swiglu"``: the
gate's and the up projection's outputs, the activation's output and the product, ``4*i``)
and no dropout.  Three switches add what an eager implementation saves beyond the paper's
list: ``norm="rmsnorm"`` (an unfused RMSNorm saves its input, its normalised output and the
inverse root: ``2*h + 1`` a norm), ``rope=True`` (the rotation saves its own Q and K, before
and after it: ``2*(h + h_kv)``, beside the attention matmuls' Q and K) and
``repeat_kv=True`` (grouped-query K and V are repeated to every head before the matmuls,
which save them at width ``h``).  With all three
the count equals PaddleFormers' Llama layer to the byte; Ernie 4.5 and Phi-3 save
``2*head_dim`` elements a token more (Ernie's interleaved RoPE keeps its repeated cos and
sin; Phi-3's fused QKV output is kept whole, a view of one buffer).  The causal mask
(``b*s*s``) is an input every layer shares, not counted per layer.
``benchmarks/analytic_layer_bytes.py`` measures all variants on the three families
(docs/planner.md has the table).  The planner does not plan from it: a plan needs
the model's call tree and its own counts (``profile``, or ``scale_profile`` for a model
too large to profile); use it to size a budget or a configuration before building one.
"""

from __future__ import annotations

__all__ = ["transformer_layer_bytes", "korthikanti_bytes"]

_MLPS = ("gelu", "swiglu")
_NORMS = ("layernorm", "rmsnorm")


def korthikanti_bytes(seq: int, batch: int, hidden: int, heads: int) -> int:
    """Korthikanti et al. 2022's activation bytes of one transformer layer (16-bit, dropout,
    no tensor parallelism): ``s*b*h*(34 + 5*a*s/h)``.

    Example:
        >>> korthikanti_bytes(2048, 1, 4096, 32) == 2048 * 4096 * (34 + 5 * 32 * 2048 // 4096)
        True
    """
    _check_sizes("korthikanti_bytes", seq=seq, batch=batch, hidden=hidden, heads=heads)
    return seq * batch * (34 * hidden + 5 * heads * seq)


def transformer_layer_bytes(seq: int, batch: int, hidden: int, heads: int, *,
                            kv_heads: int | None = None, intermediate: int | None = None,
                            mlp: str = "gelu", dropout: bool = True,
                            element_bytes: int = 2, norm: str = "layernorm", rope: bool = False,
                            repeat_kv: bool = False) -> int:
    """Bytes one transformer layer saves for backward, counted as Korthikanti et al. 2022
    do (NOTE [ Analytic layer bytes ]); the defaults give their ``s*b*h*(34 + 5*a*s/h)``.

    Args:
        seq, batch, hidden, heads: sequence length, batch, hidden size, attention heads.
        kv_heads: key/value heads (grouped-query attention; default ``heads``).
        intermediate: the MLP's inner size (default ``4 * hidden``).
        mlp: ``"gelu"`` (two linears around an activation) or ``"swiglu"`` (gated: Llama,
            Ernie 4.5, Phi-3).
        dropout: count the dropout masks and the dropped softmax.
        element_bytes: bytes of an activation element (2: float16/bfloat16, 4: float32).
        norm: ``"layernorm"`` (each norm saves its input, as in the paper) or ``"rmsnorm"``
            (an unfused RMSNorm saves its input, its normalised output and the inverse root).
        rope: rotary embeddings save Q and K before and after the rotation (beside what
            the attention matmuls save).
        repeat_kv: grouped-query K and V are repeated to every head before the matmuls,
            which save them at full width.

    Raises:
        ValueError: a size that is not a positive int, ``heads`` not dividing ``hidden``, or
            an unknown ``mlp``.

    Example:
        >>> transformer_layer_bytes(128, 2, 64, 4) == korthikanti_bytes(128, 2, 64, 4)
        True
    """
    api = "transformer_layer_bytes"
    kv_heads = heads if kv_heads is None else kv_heads
    intermediate = 4 * hidden if intermediate is None else intermediate
    _check_sizes(api, seq=seq, batch=batch, hidden=hidden, heads=heads, kv_heads=kv_heads,
                 intermediate=intermediate, element_bytes=element_bytes)
    if hidden % heads:
        raise ValueError(f"{api}: `heads` ({heads}) must divide `hidden` ({hidden})")
    if mlp not in _MLPS:
        raise ValueError(f"{api}: `mlp` must be one of {_MLPS}, got {mlp!r}")
    if norm not in _NORMS:
        raise ValueError(f"{api}: `norm` must be one of {_NORMS}, got {norm!r}")
    h_kv = kv_heads * (hidden // heads)
    k_v = hidden if repeat_kv else h_kv  # the width at which K and V are saved
    scores = heads * seq  # per token: one row of every head's scores
    attention = hidden + (hidden + k_v) + k_v + scores + hidden
    attention += 2 * (hidden + h_kv) if rope else 0  # the rotation's own Q and K, in and out
    inner = (2 if mlp == "gelu" else 4) * intermediate
    norms = 2 * (hidden if norm == "layernorm" else 2 * hidden + 1)
    elements = attention + hidden + inner + norms
    masks = scores + 2 * hidden if dropout else 0  # 1 byte each
    dropped = scores if dropout else 0  # the dropped softmax, in elements
    return seq * batch * ((elements + dropped) * element_bytes + masks)


def _check_sizes(api: str, **sizes) -> None:
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{api}: `{name}` must be a positive int, got {value!r}")
