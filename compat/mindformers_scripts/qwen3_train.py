# ruff: noqa  (MindSpore model code as users write it, kept as is)
"""A tiny mindformers Qwen3 on its training-graph path (``TrainingQwen3ForCausalLM``:
``parallel_core/training_graph``'s ``GPTModel``) trained a few steps with recompute, written as a
mindformers user writes it, for ``paddle-mindspore`` to run unmodified.

2 layers, hidden 32, 4 heads of 8 (4 key/value heads), MLP 64, vocab 128, sequence 16,
float32, no dropout, ``use_flash_attention=False``, ``fused_norm=False``;
``mindspore.value_and_grad`` and ``nn.SGD``. The batches are tokens drawn with numpy.
Key/value groups (fewer key/value heads than heads) are left out: with
``use_flash_attention=False`` mindformers 2.1.0 repeats the key/value heads (``_repeat_kv``) on
the ``(seq, batch, heads, dim)`` tensors as if they were ``(batch, heads, seq, dim)``, which
mixes batch rows into heads and hands the attention a key with the wrong batch size.

MindSpore 2.10's CPU build builds this network but cannot train it: the training-graph path
always uses ``FlashAttention`` (``FlashAttentionScore``) as its core attention and
``FusedNorm`` (``RmsNorm``) for the final norm and the q/k norms (``fused_norm`` is not passed
to the layer spec), and its rotary embedding uses ``Outer``; none of the three has a CPU kernel,
nor has the embedding lookup's backward. compat/record/record_mindformers_qwen3.py records it
with those four as compositions of CPU ops (compat/record/qwen3_cpu_compositions.py). It also reshapes labels and logits with ``ops.Morph``, which runs only in GRAPH_MODE (hence
GRAPH_MODE here). ``Qwen3ForCausalLM`` picks ``PyNativeQwen3ForCausalLM`` in PyNative mode,
which needs the ``hyper_parallel`` package (not installed), and this class otherwise.

    python qwen3_train.py --steps 4 --recompute all --init init.npz --out run.json

``--recompute`` picks the ``TransformerRecomputeConfig``: ``none``, ``full``
(``recompute=True``), ``select`` (``select_recompute=True``), ``comm``
(``select_comm_recompute=True``) or ``all`` (the three). ``--init`` loads weights by parameter
name from an ``.npz``; ``--save-init`` writes the network's initial weights to one (and
``--steps 0`` stops there). ``--out`` writes the losses and the parameter names and shapes as
JSON; ``--grads`` writes, to an ``.npz``, the first step's gradient of every trained parameter
(``grad/<name>``, what ``value_and_grad`` returned) and every parameter after the last step
(``param/<name>``). ``--noise SEED`` scales every weight by ``1 + 1e-6 * N(0, 1)`` first; ``--reverse-batch``
feeds each batch's rows in reverse order.
"""

import argparse
import json

import numpy as np
import mindspore as ms
from mindspore import nn, Tensor

from mindformers import build_context
from mindformers.models.qwen3.configuration_qwen3 import Qwen3Config
from mindformers.modules.transformer.transformer import (
    TransformerOpParallelConfig,
    TransformerRecomputeConfig,
)
from mindformers.models.qwen3.modeling_qwen3_train import TrainingQwen3ForCausalLM

BATCH, SEQ, VOCAB, LAYERS = 2, 16, 128, 2
VARIANTS = {
    "none": {},
    "full": {"recompute": True},
    "select": {"select_recompute": True},
    "comm": {"select_comm_recompute": True},
    "all": {"recompute": True, "select_recompute": True, "select_comm_recompute": True},
}


def build(variant):
    rc = TransformerRecomputeConfig(**VARIANTS[variant])
    config = Qwen3Config(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=LAYERS,
        num_attention_heads=4,
        num_key_value_heads=4,
        head_dim=8,
        max_position_embeddings=SEQ,
        seq_length=SEQ,
        compute_dtype="float32",
        rotary_dtype="float32",
        use_flash_attention=False,
        fused_norm=False,
        hidden_dropout=0.0,
        attention_dropout=0.0,
        parallel_config=TransformerOpParallelConfig(recompute=rc),
    )
    return TrainingQwen3ForCausalLM(config)


def load(net, path, noise=None):
    weights = np.load(path)
    rng = np.random.default_rng(noise) if noise is not None else None
    for p in net.get_parameters():
        w = weights[p.name]
        if rng is not None:
            w = (w * (1 + 1e-6 * rng.standard_normal(w.shape))).astype(w.dtype)
        p.set_data(Tensor(w))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument("--recompute", choices=sorted(VARIANTS), default="all")
    parser.add_argument("--init", default=None)
    parser.add_argument("--save-init", default=None)
    parser.add_argument("--noise", type=int, default=None)
    parser.add_argument("--out", default=None)
    parser.add_argument("--grads", default=None, help="write step 1's gradients and the final weights (.npz)")
    parser.add_argument("--reverse-batch", action="store_true")
    args = parser.parse_args()

    build_context({"use_legacy": False, "parallel": {},
                   "context": {"mode": "GRAPH_MODE", "device_target": "CPU"}})
    ms.set_seed(0)
    net = build(args.recompute)
    if args.save_init:
        np.savez_compressed(args.save_init, **{p.name: p.asnumpy() for p in net.get_parameters()})
    if args.init:
        load(net, args.init, args.noise)
    net.set_train(True)
    optimizer = nn.SGD(net.trainable_params(), learning_rate=args.lr)

    def forward(input_ids, labels):
        loss, _, _, _ = net(input_ids, labels=labels)
        return loss

    grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)

    rng = np.random.default_rng(0)
    losses = []
    first_grads = {}
    for step in range(args.steps):
        tokens = rng.integers(1, VOCAB, (BATCH, SEQ + 1)).astype(np.int32)
        if args.reverse_batch:
            tokens = tokens[::-1].copy()
        loss, grads = grad_fn(Tensor(tokens[:, :-1]), Tensor(tokens[:, 1:]))
        if step == 0:
            first_grads = {"grad/" + p.name: g.asnumpy().copy() for p, g in zip(optimizer.parameters, grads)}
        optimizer(grads)
        losses.append(float(loss.asnumpy()))
        print(f"step {step}: loss {losses[-1]:.6f}")
    if args.out:
        params = [[p.name, list(p.shape)] for p in net.get_parameters()]
        with open(args.out, "w") as f:
            json.dump({"losses": losses, "params": params}, f)
    if args.grads:
        weights = {"param/" + p.name: p.asnumpy() for p in net.get_parameters()}
        np.savez(args.grads, **first_grads, **weights)


if __name__ == "__main__":
    main()
