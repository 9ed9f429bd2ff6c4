# ruff: noqa  (MindSpore model code as users write it, kept as is)
"""A tiny mindformers GLM2 (``ChatGLM2ForConditionalGeneration``) trained a few steps with
recompute, written as a mindformers user writes it (runs on real MindSpore 2.10's CPU build in
PyNative mode and, unmodified, under ``paddle-mindspore``).

2 layers, hidden 32, 4 heads of 8 (multi-query attention with 2 groups), MLP 64, vocab 128,
sequence 16, float32, no dropout, no flash attention; ``mindspore.value_and_grad`` and
``nn.SGD``. The batches are tokens drawn with numpy (labels: the tokens shifted by one).

    python glm2_train.py --steps 4 --recompute all --init init.npz --out run.json

``--recompute`` picks the ``TransformerRecomputeConfig``: ``none``, ``full``
(``recompute=True``), ``select`` (``select_recompute=True``), ``comm``
(``select_comm_recompute=True``), ``all`` (the three) or ``pattern`` (``select_recompute``
naming GLM2's SiLU and attention softmax cells: the default patterns match none of GLM2's
cells). ``--init`` loads weights by parameter name from an ``.npz``; ``--save-init`` writes the
network's initial weights to one. ``--out`` writes the losses and the parameter names and
shapes as JSON; ``--grads`` writes, to an ``.npz``, the first step's gradient of every trained
parameter (``grad/<name>``, what ``value_and_grad`` returned) and every parameter after the
last step (``param/<name>``). ``--noise SEED`` scales every weight by ``1 + 1e-6 * N(0, 1)`` first;
``--reverse-batch`` feeds each batch's rows in reverse order (the same loss and gradients in
exact arithmetic, summed in another order).
"""

import argparse
import json

import numpy as np
import mindspore as ms
from mindspore import nn, Tensor

from mindformers.models.glm2 import ChatGLM2Config, ChatGLM2ForConditionalGeneration
from mindformers.modules.transformer.transformer import (
    TransformerOpParallelConfig,
    TransformerRecomputeConfig,
)

BATCH, SEQ, VOCAB = 2, 16, 128
VARIANTS = {
    "none": {},
    "full": {"recompute": True},
    "select": {"select_recompute": True},
    "comm": {"select_comm_recompute": True},
    "all": {"recompute": True, "select_recompute": True, "select_comm_recompute": True},
    # select_recompute's default patterns name Llama's cells (feed_forward.*), none of GLM2's
    "pattern": {"select_recompute": [r"mlp\.activation_func\.silu", r"self_attention\.core_attention\.softmax"]},
}


def build(variant):
    rc = TransformerRecomputeConfig(**VARIANTS[variant])
    config = ChatGLM2Config(
        batch_size=BATCH,
        num_layers=2,
        padded_vocab_size=VOCAB,
        hidden_size=32,
        ffn_hidden_size=64,
        kv_channels=8,
        num_attention_heads=4,
        multi_query_group_num=2,
        seq_length=SEQ,
        hidden_dropout=0.0,
        attention_dropout=0.0,
        param_init_type="float32",
        compute_dtype="float32",
        layernorm_compute_type="float32",
        residual_dtype="float32",
        rotary_dtype="float32",
        use_flash_attention=False,
        rmsnorm=False,
        parallel_config=TransformerOpParallelConfig(recompute=rc),
    )
    return ChatGLM2ForConditionalGeneration(config)


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

    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(0)
    net = build(args.recompute)
    if args.save_init:
        np.savez_compressed(args.save_init, **{p.name: p.asnumpy() for p in net.get_parameters()})
    if args.init:
        load(net, args.init, args.noise)
    net.set_train(True)
    optimizer = nn.SGD(net.trainable_params(), learning_rate=args.lr)
    grad_fn = ms.value_and_grad(net, None, optimizer.parameters)

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
