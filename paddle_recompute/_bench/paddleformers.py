"""PaddleFormers causal LMs as benchmark models (needs ``pip install paddleformers``).

``FAMILIES`` lists the PaddleFormers 1.2.0 families that import and train on CPU without
extra packages: llama, ernie4_5, phi3, gemma3_text and gpt_oss (a mixture of experts with
attention sinks and sliding windows).  The others need ``paddlefleet`` (qwen2, qwen3,
qwen2_moe, qwen3_moe, qwen3_next, deepseek_v3, deepseek_v32, deepseek_v4, glm4_moe,
glm_moe_dsa, kimi_k2, minimax_m2) or a GPU kernel (ernie4_5_moe: ``expand_modality_expert_id``).

In :class:`Llama` the decoder layers are PaddleFormers' own, called by its model with
keyword arguments (attention mask, RoPE tables).  Each layer's ``forward`` is replaced on
the instance by one that hands ``(the layer with its other arguments bound, hidden
states)`` to the model's runner, so every benchmark mode reaches the real layers; presets
and plans work on ``model.blocks``, the layers themselves.  Batches and loss are the GPT's
(``gpt.gpt_batch``, ``gpt.gpt_loss``): token ids and next-token cross entropy.
"""

from __future__ import annotations

import functools
import importlib
import warnings
from dataclasses import dataclass

import paddle
from paddle import nn

from .._entry.routing import route_forward
from .blocks import Runner, plain_runner

__all__ = ["FAMILIES", "causal_lm", "LlamaConfig", "Llama"]

# family -> (model class, config class, extra config, dropout keys)
FAMILIES = {
    "llama": ("LlamaForCausalLM", "LlamaConfig", {}, ("attention_dropout",)),
    "ernie4_5": ("Ernie4_5ForCausalLM", "Ernie4_5Config", {},
                 ("attention_dropout_prob", "hidden_dropout_prob")),
    "phi3": ("Phi3ForCausalLM", "Phi3Config", {}, ("attention_dropout", "resid_pdrop", "embd_pdrop")),
    "gemma3_text": ("Gemma3ForCausalLM", "Gemma3TextConfig", {}, ("attention_dropout",)),
    "gpt_oss": ("GptOssForCausalLM", "GptOssConfig",
                {"num_local_experts": 4, "num_experts_per_tok": 2, "rope_scaling": None},
                ("attention_dropout",)),
}


def causal_lm(family: str, *, vocab: int, hidden: int, heads: int, kv_heads: int, layers: int,
              positions: int, dropout: float, return_dict: bool = False, seed: int | None = 0,
              config: dict | None = None):
    """A randomly initialised PaddleFormers causal LM of ``family`` (training settings:
    unfused norms, eager attention, no KV cache; ``intermediate_size`` 2x ``hidden``);
    ``config``: further config fields (``{"fuse_swiglu": True}``)."""
    model_cls, config_cls, extra, dropout_keys = FAMILIES[family]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            modeling = importlib.import_module(f"paddleformers.transformers.{family}.modeling")
            configuration = importlib.import_module(f"paddleformers.transformers.{family}.configuration")
    except ImportError as exc:
        raise ImportError(f"PaddleFormers' {family} needs `pip install paddleformers` (the `test` "
                          "extra installs it)") from exc
    config = getattr(configuration, config_cls)(
        vocab_size=vocab, hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers,
        num_attention_heads=heads, num_key_value_heads=kv_heads, head_dim=hidden // heads,
        max_position_embeddings=positions, tie_word_embeddings=False, fuse_rms_norm=False,
        use_flash_attention=False, use_cache=False, return_dict=return_dict,
        **{k: dropout for k in dropout_keys}, **{**extra, **(config or {})})
    if seed is not None:
        paddle.seed(seed)
    return getattr(modeling, model_cls)(config)


@dataclass
class LlamaConfig:
    """Model and batch sizes (``kv_heads`` < ``heads``: grouped-query attention)."""

    vocab: int = 1024
    hidden: int = 256
    heads: int = 4
    kv_heads: int = 2
    blocks: int = 8
    seq: int = 256
    batch: int = 8
    dropout: float = 0.1


class Llama(nn.Layer):
    """PaddleFormers' ``LlamaForCausalLM``; ``forward`` returns the logits."""

    def __init__(self, cfg: LlamaConfig, runner: Runner = plain_runner):
        super().__init__()
        self.runner = runner
        self.lm = causal_lm("llama", vocab=cfg.vocab, hidden=cfg.hidden, heads=cfg.heads,
                            kv_heads=cfg.kv_heads, layers=cfg.blocks, positions=cfg.seq,
                            dropout=cfg.dropout, seed=None)
        self.blocks = self.lm.model.layers
        for block in self.blocks:
            route_forward(block, lambda forward: functools.partial(_through_runner, self, forward))

    def forward(self, tokens: paddle.Tensor) -> paddle.Tensor:
        return self.lm(input_ids=tokens, return_dict=True).logits


def _through_runner(model: Llama, forward, hidden_states, *args, **kwargs):
    """The runner gets the layer's forward with its other arguments bound (a callable of the
    hidden states, as every runner expects)."""
    return model.runner(functools.partial(_call, forward, args, kwargs), hidden_states)


def _call(forward, args, kwargs, hidden_states):
    return forward(hidden_states, *args, **kwargs)
